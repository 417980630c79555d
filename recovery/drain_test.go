package recovery

import (
	"slices"
	"testing"
)

func TestDrain(t *testing.T) {
	type step struct {
		view DrainView
		want DrainDecision
	}
	cases := []struct {
		name  string
		steps []step
		fell  bool
	}{
		{"idle node, nothing held", []step{
			{DrainView{}, DrainDecision{Action: DrainRefuse}},
			{DrainView{}, DrainDecision{Action: DrainLeave, HandedOver: true}},
			{DrainView{}, DrainDecision{Action: DrainDone}},
		}, false},
		{"puts finish, then both shuffles handed over", []step{
			{DrainView{Running: 2}, DrainDecision{Action: DrainRefuse}},
			{DrainView{Running: 2}, DrainDecision{Action: DrainWait}},
			{DrainView{Running: 1}, DrainDecision{Action: DrainWait}},
			{DrainView{Held: []string{"a", "b"}}, DrainDecision{Action: DrainHandOver, Shuffles: []string{"a", "b"}}},
			{DrainView{Held: []string{"a", "b"}, Handed: []string{"a"}}, DrainDecision{Action: DrainHandOver, Shuffles: []string{"b"}}},
			{DrainView{Held: []string{"a", "b"}, Handed: []string{"b"}}, DrainDecision{Action: DrainLeave, HandedOver: true}},
		}, false},
		{"deadline while puts run", []step{
			{DrainView{Running: 1}, DrainDecision{Action: DrainRefuse}},
			{DrainView{Running: 1, Expired: true}, DrainDecision{Action: DrainLeave, Why: "drain deadline passed"}},
			{DrainView{Running: 1, Expired: true}, DrainDecision{Action: DrainDone}},
		}, true},
		{"killed during the handover falls back once", []step{
			{DrainView{}, DrainDecision{Action: DrainRefuse}},
			{DrainView{Held: []string{"a"}}, DrainDecision{Action: DrainHandOver, Shuffles: []string{"a"}}},
			{DrainView{Held: []string{"a"}, Killed: true}, DrainDecision{Action: DrainLeave, Why: "killed while draining"}},
			{DrainView{Held: []string{"a"}, Killed: true}, DrainDecision{Action: DrainDone}},
			{DrainView{Held: []string{"a"}, Handed: []string{"a"}}, DrainDecision{Action: DrainDone}},
		}, true},
		{"a failed handover falls back", []step{
			{DrainView{}, DrainDecision{Action: DrainRefuse}},
			{DrainView{Held: []string{"a", "b"}}, DrainDecision{Action: DrainHandOver, Shuffles: []string{"a", "b"}}},
			{DrainView{Held: []string{"a", "b"}, Handed: []string{"a"}, Failed: []string{"b"}}, DrainDecision{Action: DrainLeave, Why: "handover of shuffle b failed"}},
		}, true},
		{"killed after leaving changes nothing", []step{
			{DrainView{}, DrainDecision{Action: DrainRefuse}},
			{DrainView{}, DrainDecision{Action: DrainLeave, HandedOver: true}},
			{DrainView{Killed: true}, DrainDecision{Action: DrainDone}},
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := NewDrain()
			for i, s := range tc.steps {
				got := d.Step(s.view)
				if got.Action != s.want.Action || got.HandedOver != s.want.HandedOver || got.Why != s.want.Why || !slices.Equal(got.Shuffles, s.want.Shuffles) {
					t.Fatalf("step %d: got %+v (%s), want %+v (%s)", i, got, got.Action, s.want, s.want.Action)
				}
			}
			if d.FellBack() != tc.fell {
				t.Errorf("FellBack = %v, want %v", d.FellBack(), tc.fell)
			}
		})
	}
}

// TestDrainLeavesOnce checks, over every sequence of views drawn from a
// small set, that a drain decides to leave at most once and never
// refuses or hands over after it did.
func TestDrainLeavesOnce(t *testing.T) {
	views := []DrainView{
		{Running: 1}, {}, {Held: []string{"a"}}, {Held: []string{"a"}, Handed: []string{"a"}},
		{Failed: []string{"a"}}, {Expired: true}, {Killed: true},
	}
	var walk func(d *Drain, depth int, left bool)
	walk = func(d *Drain, depth int, left bool) {
		if depth == 0 {
			return
		}
		for _, v := range views {
			c := *d
			c.handed = map[string]bool{}
			for k := range d.handed {
				c.handed[k] = true
			}
			got := c.Step(v)
			if left && got.Action != DrainDone {
				t.Fatalf("after leaving: %s", got.Action)
			}
			walk(&c, depth-1, left || got.Action == DrainLeave)
		}
	}
	walk(NewDrain(), 6, false)
}
