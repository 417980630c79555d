package control

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/shufflenode/shufflenode/barrier"
)

func TestControlRejectsBadShuffleID(t *testing.T) {
	for _, body := range []string{`{"op":"seal","shuffle":""}`, `{"op":"seal","shuffle":"a/b"}`, `not json`} {
		if _, err := Decode([]byte(body)); err == nil {
			t.Errorf("Decode(%s) accepted", body)
		}
	}
}

func FuzzDecodeControl(f *testing.F) {
	held := barrier.Totals{Rows: 3}
	for _, c := range []Msg{
		{Op: OpBegin, Shuffle: "s", Node: "n", Task: 3, Attempt: 1},
		{Op: OpCommitted, Shuffle: "s", Node: "n", Held: &held},
		{Op: OpDone, Shuffle: "s", Sent: map[string]barrier.Totals{"a": held}},
		{Op: OpCheck, Shuffle: "s", Node: "n"},
		{Op: OpTasks, Shuffle: "s", Node: "n", Tasks: []TaskReport{{Op: OpBegin, Task: 1}, {Op: OpDone, Task: 2, Epoch: 1, Sent: map[string]barrier.Totals{"a": held}}}},
	} {
		b, _ := json.Marshal(c)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Decode(b)
		if err != nil {
			return
		}
		again, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		c2, err := Decode(again)
		if err != nil || !reflect.DeepEqual(c, c2) {
			t.Fatalf("control message does not survive a round trip: %v", err)
		}
	})
}
