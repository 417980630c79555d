package record_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/shufflenode/shufflenode/record"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/table"
)

// validRecord is the record of the frame "rec" over a, b, c created by a,
// in the epoch where lost are gone.
func validRecord(t *testing.T, lost ...string) record.Record {
	t.Helper()
	members := []string{"a", "b", "c"}
	node, term, _ := shuffle.CoordinatorOf("rec", "a", members, lost)
	sp := &spec.Spec{ID: "rec", Kind: spec.Dataframe, Tasks: 2, Partitions: 3, Schema: schema(t),
		Rule: table.Rule{Kind: table.Hash, Columns: []string{"key"}}}
	return record.Record{Spec: sp, Creator: "a", Members: members, Lost: lost, Epoch: uint64(len(lost)), Coordinator: node, Term: term}
}

func rank(t *testing.T, r any) (uint64, error) {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return record.Rank(record.Prefix+"rec", b)
}

// The rule of shuffle records accepts only well-formed, consistent records
// and ranks a higher term above any epoch of a lower one.
func TestRecordRank(t *testing.T) {
	r0, err := rank(t, validRecord(t))
	if err != nil {
		t.Fatal(err)
	}
	lostData := validRecord(t, "c")
	if lostData.Coordinator != "a" {
		lostData = validRecord(t, "b") // lose the member that is not next in line
	}
	r1, err := rank(t, lostData)
	if err != nil || r1 <= r0 {
		t.Fatalf("epoch 1, same term: rank %d (%v), want above %d", r1, err, r0)
	}
	takeover, err := rank(t, validRecord(t, "a"))
	if err != nil || takeover <= r1 {
		t.Fatalf("term 1: rank %d (%v), want above %d", takeover, err, r1)
	}
	for _, tc := range []struct {
		name   string
		mutate func(*record.Record)
	}{
		{"coordinator not the one the lost list makes", func(r *record.Record) { r.Coordinator = "b" }},
		{"term not the one the lost list makes", func(r *record.Record) { r.Term = 7 }},
		{"epoch not the lost count", func(r *record.Record) { r.Epoch = 2 }},
		{"lost member unknown", func(r *record.Record) { r.Lost, r.Epoch = []string{"z"}, 1 }},
		{"creator not a member", func(r *record.Record) { r.Creator = "z" }},
		{"members unsorted", func(r *record.Record) { r.Members = []string{"b", "a", "c"} }},
		{"spec of another shuffle", func(r *record.Record) { r.Spec.ID = "other" }},
		{"no spec", func(r *record.Record) { r.Spec = nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := validRecord(t)
			tc.mutate(&r)
			if _, err := rank(t, r); !errors.Is(err, shuffle.ErrBadInput) {
				t.Fatalf("rank: %v, want ErrBadInput", err)
			}
		})
	}
	b, _ := json.Marshal(validRecord(t))
	extra := strings.Replace(string(b), "{", `{"signed_by":"x",`, 1)
	if _, err := record.Rank(record.Prefix+"rec", []byte(extra)); !errors.Is(err, shuffle.ErrBadInput) {
		t.Fatalf("unknown field: %v", err)
	}
}

// A record over MaxRecordBytes is refused before it is decoded.
func TestRecordRankOversized(t *testing.T) {
	b, _ := json.Marshal(validRecord(t))
	big := append(b[:len(b):len(b)], strings.Repeat(" ", record.MaxBytes-len(b)+1)...)
	if _, err := record.Rank(record.Prefix+"rec", big); !errors.Is(err, shuffle.ErrBadInput) || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("oversized record: %v, want ErrBadInput naming the limit", err)
	}
	if _, err := record.Rank(record.Prefix+"rec", big[:record.MaxBytes]); err != nil {
		t.Fatalf("record of exactly MaxRecordBytes (trailing spaces): %v", err)
	}
}

// schema is the encoded schema of a dataframe shuffle keyed by "key".
func schema(t *testing.T) []byte {
	t.Helper()
	codec, err := table.NewCodec(table.GenSchema(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return codec.SchemaBytes()
}

// FuzzRank feeds arbitrary values to the rule of shuffle records: it
// returns a rank or an error wrapping ErrBadInput, never panics, and a
// value it ranks decodes to a record that checks.
func FuzzRank(f *testing.F) {
	b, _ := json.Marshal(validRecord(&testing.T{}))
	f.Add(b)
	f.Add([]byte(`{"spec":null}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, value []byte) {
		_, err := record.Rank(record.Prefix+"rec", value)
		if err != nil {
			if !errors.Is(err, shuffle.ErrBadInput) {
				t.Fatalf("rank: %v, want ErrBadInput", err)
			}
			return
		}
		r, err := record.Decode(value)
		if err != nil || r.Check("rec") != nil {
			t.Fatalf("ranked a value that does not decode and check: %v", err)
		}
	})
}
