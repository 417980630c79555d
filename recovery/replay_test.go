package recovery

import "testing"

func TestOnLoss(t *testing.T) {
	for _, tc := range []struct {
		name    string
		awaited bool
		r       Receipt
		loss    LossEffect
		excuse  LossEffect
	}{
		{"not a receiver of the attempt's epoch", false, Receipt{}, Unaffected, Unaffected},
		{"not a receiver, data on record", false, Receipt{Data: true, Committed: true}, Unaffected, Unaffected},
		{"held data, committed", true, Receipt{Data: true, Committed: true}, Replay, Unaffected},
		{"held data, not committed", true, Receipt{Data: true}, Replay, Excused},
		{"no data, committed", true, Receipt{Committed: true}, Unaffected, Unaffected},
		{"no data, commit awaited", true, Receipt{}, Excused, Excused},
	} {
		if got := OnLoss(tc.awaited, tc.r); got != tc.loss {
			t.Errorf("%s: OnLoss = %v, want %v", tc.name, got, tc.loss)
		}
		if got := OnExcuse(tc.awaited, tc.r); got != tc.excuse {
			t.Errorf("%s: OnExcuse = %v, want %v", tc.name, got, tc.excuse)
		}
	}
}

func TestPartialReplay(t *testing.T) {
	d, dc, c, none := Receipt{Data: true}, Receipt{Data: true, Committed: true}, Receipt{Committed: true}, Receipt{}
	for _, tc := range []struct {
		name     string
		receipts []Receipt
		lost     int
		want     bool
	}{
		{"every receiver with data committed", []Receipt{dc, dc, none}, 2, true},
		{"only the lost one had not committed", []Receipt{dc, d, c}, 1, true},
		{"another receiver with data had not committed", []Receipt{d, dc, dc}, 2, false},
		{"receivers without data need not commit", []Receipt{none, none, dc}, 0, true},
		{"no lost position: everyone counts", []Receipt{dc, d}, -1, false},
		{"no receivers", nil, -1, true},
	} {
		got := PartialReplay(len(tc.receipts), tc.lost, func(p int) Receipt { return tc.receipts[p] })
		if got != tc.want {
			t.Errorf("%s: PartialReplay = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestEpochRules(t *testing.T) {
	for _, tc := range []struct {
		current, announced uint64
		want               bool
	}{{0, 1, true}, {1, 1, false}, {3, 2, false}, {2, 5, true}} {
		if got := Adopt(tc.current, tc.announced); got != tc.want {
			t.Errorf("Adopt(%d, %d) = %v, want %v", tc.current, tc.announced, got, tc.want)
		}
	}
	for _, tc := range []struct {
		replicated bool
		losses     int
		want       bool
	}{{false, 1, false}, {true, 1, true}, {true, 2, false}, {true, 0, false}} {
		if got := Absorbed(tc.replicated, tc.losses); got != tc.want {
			t.Errorf("Absorbed(%v, %d) = %v, want %v", tc.replicated, tc.losses, got, tc.want)
		}
	}
	for _, tc := range []struct{ sealed, announced, failed, want bool }{
		{true, false, false, true},
		{true, true, false, false},
		{true, false, true, false},
		{false, false, false, false},
	} {
		if got := Reseal(tc.sealed, tc.announced, tc.failed); got != tc.want {
			t.Errorf("Reseal(%v, %v, %v) = %v, want %v", tc.sealed, tc.announced, tc.failed, got, tc.want)
		}
	}
}

func TestTakeoverInference(t *testing.T) {
	liveC, liveN := Witness{Live: true, Committed: true, Owned: true}, Witness{Live: true, Owned: true}
	lostOwned, lostEmpty := Witness{Owned: true}, Witness{Committed: true}
	for _, tc := range []struct {
		name      string
		witnesses []Witness
		committed bool
		sent      []Sent
	}{
		{"every live receiver committed", []Witness{liveC, liveC}, true, []Sent{AsCommitted, AsCommitted}},
		{"a live receiver did not commit", []Witness{liveC, liveN}, false, nil},
		{"a lost owner counts as data", []Witness{liveC, lostOwned}, true, []Sent{AsCommitted, Data}},
		{"a lost receiver that owned nothing keeps its commit", []Witness{lostEmpty, liveC}, true, []Sent{AsCommitted, AsCommitted}},
		{"only lost receivers", []Witness{lostOwned, lostEmpty}, true, []Sent{Data, AsCommitted}},
	} {
		got := Committed(len(tc.witnesses), func(p int) Witness { return tc.witnesses[p] })
		if got != tc.committed {
			t.Errorf("%s: Committed = %v, want %v", tc.name, got, tc.committed)
		}
		for i, want := range tc.sent {
			if s := InferSent(tc.witnesses[i]); s != want {
				t.Errorf("%s: InferSent(receiver %d) = %v, want %v", tc.name, i, s, want)
			}
		}
	}
}
