package control

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestDecodeBoundsTaskBatch(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
		ok   bool
	}{{"at the limit", MaxTaskBatch, true}, {"over it", MaxTaskBatch + 1, false}} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(Msg{Op: OpTasks, Shuffle: "s", Node: "n", Tasks: make([]TaskReport, tc.n)})
			if err != nil {
				t.Fatal(err)
			}
			_, err = Decode(b)
			if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrBadMsg)) {
				t.Errorf("Decode of %d task reports: %v", tc.n, err)
			}
		})
	}
}

func TestTaskReportCheck(t *testing.T) {
	for op, ok := range map[string]bool{OpBegin: true, OpDone: true, OpCommitted: false, OpSeal: false, "": false} {
		r := TaskReport{Op: op, Task: 1}
		if err := r.Check(); (err == nil) != ok {
			t.Errorf("Check of a %q report: %v", op, err)
		}
		if m := r.Msg("s", "n"); m.Op != op || m.Task != 1 || m.Node != "n" || m.Shuffle != "s" {
			t.Errorf("Msg of %+v: %+v", r, m)
		}
	}
}
