package failover

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/shuffle"
)

// lineHost is node a holding one shuffle, whose checks the test answers
// per node; it runs background work at once and records what a asks
// others and what it drops.
type lineHost struct {
	host
	sh      *Shuffle
	mu      sync.Mutex
	answers map[string]control.Reply // by node; absent: no answer
	asked   []control.Msg
	dropped []string
}

func (h *lineHost) Lookup(id string) (*Shuffle, error) {
	if id != h.sh.ID() {
		return nil, errors.New("unknown")
	}
	return h.sh, nil
}
func (h *lineHost) Held() []*Shuffle                    { return []*Shuffle{h.sh} }
func (h *lineHost) Background(fn func(context.Context)) { fn(context.Background()) }
func (h *lineHost) Drop(id, why string, _ bool) error {
	h.dropped = append(h.dropped, why)
	return nil
}
func (h *lineHost) Request(_ context.Context, n string, c control.Msg) (control.Reply, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c.Node = n + "<-" + c.Node
	h.asked = append(h.asked, c)
	if r, ok := h.answers[n]; ok && c.Op == control.OpCheck {
		return r, nil
	}
	if c.Op == control.OpRestarted {
		return control.Reply{}, nil
	}
	return control.Reply{}, errors.New("unreachable")
}

// TestRecheckOtherLine: node a followed coordinator b (term 0), which
// declared c and d lost during a split; after the mend c took over in a
// newer term without having lost a (another line of epochs) and b stepped
// down. a's check asks c too, though it knows c lost; c counts it in, so a
// asks c to declare it lost (OpRestarted) and keeps the shuffle; once c
// answers lost, a drops it. It refuses c's line's epoch moves meanwhile.
func TestRecheckOtherLine(t *testing.T) {
	sh := newShuffle(t, "b")
	sh.born = time.Now().Add(-time.Hour) // old enough to be checked
	sh.Lock()
	err := sh.MoveLocked([]string{"c", "d"})
	sh.Unlock()
	if err != nil || sh.Coordinator() != "b" {
		t.Fatalf("epoch of lost c, d: coordinator %s, %v", sh.Coordinator(), err)
	}
	h := &lineHost{sh: sh, answers: map[string]control.Reply{
		"b": {Status: control.StatusUnknown},
		"c": {Status: control.StatusMember, Epoch: 1, Term: 1, Lost: []string{"b"}},
	}}
	d := New(Config{Host: h})
	d.recheckOne(context.Background(), sh)
	var told []string
	for _, m := range h.asked {
		if m.Op == control.OpRestarted {
			told = append(told, m.Node)
		}
	}
	if !slices.Equal(told, []string{"c<-a"}) || len(h.dropped) > 0 {
		t.Fatalf("asked to be declared lost: %v, dropped %v; want c<-a, none", told, h.dropped)
	}
	if err := sh.CheckMove(control.OpTakeover, "c", 1, []string{"b"}, 1); !errors.Is(err, shuffle.ErrOtherLine) {
		t.Errorf("c's takeover of another line: %v, want ErrOtherLine", err)
	}
	h.answers["c"] = control.Reply{Status: control.StatusLost, Epoch: 2, Term: 1, Lost: []string{"b", "a"}}
	d.recheckOne(context.Background(), sh)
	if len(h.dropped) != 1 {
		t.Fatalf("dropped %v once declared lost by c, want once", h.dropped)
	}
}
