package service

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/shufflenode/shufflenode/barrier"
	"github.com/shufflenode/shufflenode/splitter"
)

func sampleBatch() *splitter.Batch {
	return &splitter.Batch{Shuffle: "s-1", Epoch: 3,
		Entries: []splitter.Entry{
			{Task: 7, Attempt: 1, Seq: 0, Runs: []splitter.Run{{Partition: 2, Count: 10}, {Partition: 9, Count: 1}}, Data: []byte("arrow bytes")},
			{Task: 1 << 40, Attempt: 0, Seq: 5, Data: []byte{}},
		},
		Ends: []splitter.End{{Task: 7, Attempt: 1, Pieces: 1, Totals: barrier.Totals{Pieces: 1, Rows: 11, Bytes: 11, Checksum: 1 << 33}}},
	}
}

func TestShardsRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    *splitter.Batch
	}{
		{"empty", &splitter.Batch{Shuffle: "x"}},
		{"entries and ends", sampleBatch()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := decodeShards(encodeShards(nil, tc.b))
			if err != nil {
				t.Fatal(err)
			}
			if m.Shuffle != tc.b.Shuffle || m.Epoch != tc.b.Epoch || len(m.Entries) != len(tc.b.Entries) || len(m.Ends) != len(tc.b.Ends) {
				t.Fatalf("decoded %+v from %+v", m, tc.b)
			}
			for i, e := range tc.b.Entries {
				got := m.Entries[i]
				if got.Task != e.Task || got.Attempt != e.Attempt || got.Seq != e.Seq || !bytes.Equal(got.Data, e.Data) || len(got.Runs) != len(e.Runs) {
					t.Fatalf("entry %d: %+v, want %+v", i, got, e)
				}
			}
			for i, e := range tc.b.Ends {
				if m.Ends[i] != (endMsg{Task: e.Task, Attempt: e.Attempt, Pieces: e.Pieces, Totals: e.Totals}) {
					t.Fatalf("end %d: %+v", i, m.Ends[i])
				}
			}
		})
	}
}

func TestShardsRejectsTruncation(t *testing.T) {
	b := encodeShards(nil, sampleBatch())
	for n := range len(b) {
		if _, err := decodeShards(b[:n]); err == nil {
			t.Fatalf("a message cut to %d of %d bytes decoded", n, len(b))
		}
	}
	if _, err := decodeShards(append(b, 0)); err == nil {
		t.Fatal("trailing byte accepted")
	}
}

func TestControlRejectsBadShuffleID(t *testing.T) {
	for _, body := range []string{`{"op":"seal","shuffle":""}`, `{"op":"seal","shuffle":"a/b"}`, `not json`} {
		if _, err := decodeControl([]byte(body)); err == nil {
			t.Errorf("decodeControl(%s) accepted", body)
		}
	}
}

func FuzzDecodeShards(f *testing.F) {
	f.Add(encodeShards(nil, sampleBatch()))
	f.Add(encodeShards(nil, &splitter.Batch{Shuffle: "x"}))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeShards(b)
		if err != nil {
			return
		}
		// What decodes must survive a re-encoding (varints may have had
		// non-canonical forms, so compare messages, not bytes).
		m2, err := decodeShards(encodeShards(nil, toBatch(m)))
		if err != nil || !reflect.DeepEqual(normal(m), normal(m2)) {
			t.Fatalf("message does not survive a round trip (%v):\n%+v\n%+v", err, m, m2)
		}
	})
}

// normal makes empty slices nil so DeepEqual compares content.
func normal(m *shardsMsg) *shardsMsg {
	c := *m
	c.Entries = append([]splitter.Entry(nil), m.Entries...)
	for i := range c.Entries {
		if len(c.Entries[i].Runs) == 0 {
			c.Entries[i].Runs = nil
		}
		if len(c.Entries[i].Data) == 0 {
			c.Entries[i].Data = nil
		}
	}
	return &c
}

func toBatch(m *shardsMsg) *splitter.Batch {
	b := &splitter.Batch{Shuffle: m.Shuffle, Epoch: m.Epoch, Entries: m.Entries}
	for _, e := range m.Ends {
		b.Ends = append(b.Ends, splitter.End{Task: e.Task, Attempt: e.Attempt, Pieces: e.Pieces, Totals: e.Totals})
	}
	return b
}

func FuzzDecodeControl(f *testing.F) {
	held := barrier.Totals{Rows: 3}
	for _, c := range []control{
		{Op: opBegin, Shuffle: "s", Node: "n", Task: 3, Attempt: 1},
		{Op: opCommitted, Shuffle: "s", Node: "n", Held: &held},
		{Op: opDone, Shuffle: "s", Sent: map[string]barrier.Totals{"a": held}},
	} {
		b, _ := json.Marshal(c)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := decodeControl(b)
		if err != nil {
			return
		}
		again, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		c2, err := decodeControl(again)
		if err != nil || !reflect.DeepEqual(c, c2) {
			t.Fatalf("control does not survive a round trip: %v", err)
		}
	})
}
