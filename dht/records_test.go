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
