package recovery

import "testing"

func TestPlanHandOver(t *testing.T) {
	cases := []struct {
		name string
		f    HandOverFacts
		want HandOverMode
	}{
		{"gone", HandOverFacts{Gone: true, Holds: true, Copyable: true}, HandNothing},
		{"holds nothing", HandOverFacts{Copyable: true}, HandNothing},
		{"replicated, none lost", HandOverFacts{Holds: true, Replicated: true, Copyable: true}, HandNothing},
		{"replicated, one lost already", HandOverFacts{Holds: true, Replicated: true, Lost: 1, Copyable: true}, HandCopy},
		{"one copy", HandOverFacts{Holds: true, Copyable: true}, HandCopy},
		{"one copy, coordinates", HandOverFacts{Holds: true, Copyable: true, Coordinates: true}, HandRefuse},
		{"replicated, coordinates", HandOverFacts{Holds: true, Replicated: true, Coordinates: true, Copyable: true}, HandNothing},
		{"one copy, array", HandOverFacts{Holds: true}, HandRefuse},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := PlanHandOver(tc.f); got != tc.want {
				t.Errorf("PlanHandOver(%+v) = %s, want %s", tc.f, got, tc.want)
			}
		})
	}
}

func TestOnHandOver(t *testing.T) {
	cases := []struct {
		awaited bool
		r       Receipt
		want    LossEffect
	}{
		{false, Receipt{Data: true}, Unaffected},
		{true, Receipt{Data: true, Committed: true}, Unaffected},
		{true, Receipt{Committed: true}, Unaffected},
		{true, Receipt{Data: true}, Replay},
		{true, Receipt{}, Excused},
	}
	for _, tc := range cases {
		if got := OnHandOver(tc.awaited, tc.r); got != tc.want {
			t.Errorf("OnHandOver(%v, %+v) = %s, want %s", tc.awaited, tc.r, got, tc.want)
		}
	}
}

func TestHandOversEndOnce(t *testing.T) {
	var h HandOvers
	if h.Hold() {
		t.Fatal("a seal is held with no handover")
	}
	if !h.Begin("b") || h.Begin("b") {
		t.Fatal("Begin must succeed once")
	}
	if !h.Begin("c") || !h.Handing("c") {
		t.Fatal("a second node hands over too")
	}
	if !h.Hold() {
		t.Fatal("a seal decided during a handover must wait")
	}
	if e := h.End("b", true); e != (HandOverEnd{Ended: true}) {
		t.Fatalf("end b: %+v, want ended, seal still held for c", e)
	}
	if e := h.End("c", false); e != (HandOverEnd{Ended: true, FallBack: true, Seal: true}) {
		t.Fatalf("end c: %+v, want a fallback and the held seal", e)
	}
	for _, n := range []string{"b", "c", "d"} {
		if e := h.End(n, false); e != (HandOverEnd{}) {
			t.Errorf("second end of %s: %+v, want nothing (a fallback happens once)", n, e)
		}
	}
	if h.Begin("b") {
		t.Error("a node whose handover ended began again")
	}
}
