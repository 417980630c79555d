package dht

import (
	"encoding/binary"
	"errors"
	"testing"
)

func versioned(v uint64, s string) []byte {
	return append(binary.BigEndian.AppendUint64(nil, v), s...)
}

func TestRecordValidatorSelect(t *testing.T) {
	cases := []struct {
		name   string
		values [][]byte
		want   int
	}{
		{"one", [][]byte{versioned(1, "a")}, 0},
		{"newest last", [][]byte{versioned(1, "a"), versioned(2, "b"), versioned(3, "c")}, 2},
		{"newest first", [][]byte{versioned(9, "a"), versioned(2, "b")}, 0},
		{"tie by bytes", [][]byte{versioned(5, "a"), versioned(5, "c"), versioned(5, "b")}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := recordValidator{}.Select("/shufflenode/k", tc.values)
			if err != nil || got != tc.want {
				t.Fatalf("Select = %d, %v; want %d", got, err, tc.want)
			}
			// Every node must pick the same value whatever order it got them in.
			rev := make([][]byte, len(tc.values))
			for i, v := range tc.values {
				rev[len(rev)-1-i] = v
			}
			if g, _ := (recordValidator{}).Select("/shufflenode/k", rev); string(rev[g]) != string(tc.values[tc.want]) {
				t.Fatalf("Select on reversed input picked %q", rev[g])
			}
		})
	}
	if _, err := (recordValidator{}).Select("/shufflenode/k", nil); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Select(nil): %v", err)
	}
}

func TestRecordValidatorValidate(t *testing.T) {
	cases := []struct {
		name  string
		value []byte
		ok    bool
	}{
		{"empty payload", versioned(1, ""), true},
		{"payload", versioned(1, "spec"), true},
		{"no version", []byte{1, 2, 3}, false},
		{"too large", make([]byte, versionSize+MaxRecordSize+1), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := recordValidator{}.Validate("/shufflenode/k", tc.value)
			if (err == nil) != tc.ok {
				t.Fatalf("Validate: %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

// A rule refuses malformed values of its keys and selects the highest
// rank, whatever the versions; keys without a rule keep the newest value.
func TestRecordRules(t *testing.T) {
	rv := recordValidator{rules: []RecordRule{{Prefix: "ranked/", Rank: func(_ string, v []byte) (uint64, error) {
		if len(v) == 0 || v[0] != '#' {
			return 0, errors.New("not a ranked value")
		}
		return uint64(len(v)), nil
	}}}}
	key := "/shufflenode/ranked/s1"
	if err := rv.Validate(key, versioned(1, "plain")); !errors.Is(err, ErrRecord) {
		t.Fatalf("malformed value: %v, want ErrRecord", err)
	}
	if err := rv.Validate("/shufflenode/other/s1", versioned(1, "plain")); err != nil {
		t.Fatalf("key without a rule: %v", err)
	}
	values := [][]byte{versioned(9, "#a"), versioned(1, "#abc"), versioned(5, "bad"), versioned(2, "#ab")}
	if got, err := rv.Select(key, values); err != nil || got != 1 {
		t.Fatalf("Select = %d, %v; want 1 (highest rank, oldest version)", got, err)
	}
	if _, err := rv.Select(key, [][]byte{versioned(5, "bad")}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Select of only invalid values: %v", err)
	}
}
