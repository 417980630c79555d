package held

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
)

func TestTableLifecycle(t *testing.T) {
	tb := New[int]()
	if _, exists, err := tb.Add("a", 1, nil); exists || err != nil {
		t.Fatalf("Add a: exists %v, %v", exists, err)
	}
	if old, exists, _ := tb.Add("a", 2, nil); !exists || old != 1 {
		t.Errorf("Add a again: %d, exists %v; want the first entry", old, exists)
	}
	full := errors.New("full")
	if _, _, err := tb.Add("b", 2, func(held int) error {
		if held >= 1 {
			return full
		}
		return nil
	}); !errors.Is(err, full) {
		t.Errorf("Add b over the check: %v, want it refused", err)
	}
	if e, ok, tr := tb.Find("a", nil); !ok || e != 1 || tr.Gone {
		t.Errorf("Find a: %d %v %+v", e, ok, tr)
	}
	if _, ok, _ := tb.Find("a", func(e int) bool { return e > 1 }); ok {
		t.Error("Find a with a match that refuses it found it")
	}
	if e, ok := tb.Drop("a", "closed", false); !ok || e != 1 {
		t.Errorf("Drop a: %d %v", e, ok)
	}
	if _, ok, tr := tb.Find("a", nil); ok || !tr.Gone || tr.Why != "closed" || tr.Left || !tb.Gone("a") {
		t.Errorf("Find a after its drop: %v %+v, want its tombstone", ok, tr)
	}
	if _, ok := tb.Drop("never", "x", false); ok || tb.Gone("never") {
		t.Error("dropping a shuffle never held left a tombstone")
	}
}

// A shuffle that goes on without this node is left; when it ends later
// (dropped again, though no longer held), its tombstone becomes plain.
func TestTableLeft(t *testing.T) {
	tb := New[int]()
	tb.Add("s", 1, nil)
	tb.Drop("s", "declared lost", true)
	if _, _, tr := tb.Find("s", nil); !tr.Left || tr.Why != "declared lost" {
		t.Errorf("after a drop as left: %+v", tr)
	}
	tb.Drop("s", "closed", false)
	if _, _, tr := tb.Find("s", nil); tr.Left || !tr.Gone || tr.Why != "closed" {
		t.Errorf("after it ended: %+v, want a plain tombstone", tr)
	}
}

func TestTombstonesBounded(t *testing.T) {
	tb := New[int]()
	for i := range maxTombstones + 10 {
		id := fmt.Sprint(i)
		tb.Add(id, i, nil)
		tb.Drop(id, "expired", i%2 == 0)
	}
	if tb.Gone("0") || tb.Gone("9") || !tb.Gone("10") || !tb.Gone(fmt.Sprint(maxTombstones+9)) {
		t.Error("the oldest tombstones were not the ones forgotten")
	}
	if len(tb.gone.reason) != maxTombstones || len(tb.gone.order) != maxTombstones {
		t.Errorf("%d reasons, %d in order; want %d", len(tb.gone.reason), len(tb.gone.order), maxTombstones)
	}
	if _, _, tr := tb.Find("0", nil); tr.Left {
		t.Error("a forgotten tombstone is still left")
	}
}

func TestTableClose(t *testing.T) {
	tb := New[int]()
	tb.Add("a", 1, nil)
	if !tb.IfOpen(func() {}) || !tb.Close() || tb.Close() {
		t.Fatal("Close did not close once")
	}
	ran := false
	if tb.IfOpen(func() { ran = true }) || ran {
		t.Error("IfOpen ran on a closed table")
	}
	if _, ok, tr := tb.Find("a", nil); ok || !tr.Closed {
		t.Errorf("Find on a closed table: %v %+v", ok, tr)
	}
}

func TestTableConcurrent(t *testing.T) {
	tb := New[int]()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 200 {
				id := fmt.Sprint(w, "-", i)
				tb.Add(id, i, nil)
				tb.Find(id, nil)
				tb.All(nil)
				tb.Drop(id, "closed", false)
			}
		})
	}
	wg.Wait()
	if tb.Len() != 0 || len(tb.IDs()) != 0 || !slices.Equal(tb.All(nil), []int{}) {
		t.Errorf("%d shuffles held after every one was dropped", tb.Len())
	}
}
