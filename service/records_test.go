package service_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/shuffle"
)

// validRecord is the record of the frame "rec" over a, b, c created by a,
// in the epoch where lost are gone.
func validRecord(t *testing.T, lost ...string) service.Record {
	t.Helper()
	members := []string{"a", "b", "c"}
	node, term, _ := shuffle.CoordinatorOf("rec", "a", members, lost)
	sp := newFrame("rec", 2, 3, 10, 1).spec()
	return service.Record{Spec: sp, Creator: "a", Members: members, Lost: lost, Epoch: uint64(len(lost)), Coordinator: node, Term: term}
}

func rank(t *testing.T, r any) (uint64, error) {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return service.RecordRank(service.RecordPrefix+"rec", b)
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
		mutate func(*service.Record)
	}{
		{"coordinator not the one the lost list makes", func(r *service.Record) { r.Coordinator = "b" }},
		{"term not the one the lost list makes", func(r *service.Record) { r.Term = 7 }},
		{"epoch not the lost count", func(r *service.Record) { r.Epoch = 2 }},
		{"lost member unknown", func(r *service.Record) { r.Lost, r.Epoch = []string{"z"}, 1 }},
		{"creator not a member", func(r *service.Record) { r.Creator = "z" }},
		{"members unsorted", func(r *service.Record) { r.Members = []string{"b", "a", "c"} }},
		{"spec of another shuffle", func(r *service.Record) { r.Spec.ID = "other" }},
		{"no spec", func(r *service.Record) { r.Spec = nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := validRecord(t)
			tc.mutate(&r)
			if _, err := rank(t, r); !errors.Is(err, service.ErrBadInput) {
				t.Fatalf("rank: %v, want ErrBadInput", err)
			}
		})
	}
	b, _ := json.Marshal(validRecord(t))
	extra := strings.Replace(string(b), "{", `{"signed_by":"x",`, 1)
	if _, err := service.RecordRank(service.RecordPrefix+"rec", []byte(extra)); !errors.Is(err, service.ErrBadInput) {
		t.Fatalf("unknown field: %v", err)
	}
}

// A record over MaxRecordBytes is refused before it is decoded.
func TestRecordRankOversized(t *testing.T) {
	b, _ := json.Marshal(validRecord(t))
	big := append(b[:len(b):len(b)], strings.Repeat(" ", service.MaxRecordBytes-len(b)+1)...)
	if _, err := service.RecordRank(service.RecordPrefix+"rec", big); !errors.Is(err, service.ErrBadInput) || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("oversized record: %v, want ErrBadInput naming the limit", err)
	}
	if _, err := service.RecordRank(service.RecordPrefix+"rec", big[:service.MaxRecordBytes]); err != nil {
		t.Fatalf("record of exactly MaxRecordBytes (trailing spaces): %v", err)
	}
}
