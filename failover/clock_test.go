package failover

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/internal/clock"
	"github.com/shufflenode/shufflenode/internal/testkit"
)

// The driver's timers run on Config.Clock: these tests move a Fake by
// hand, inside a synctest bubble where the driver's goroutines run, so
// that synctest.Wait tells when they are all blocked again.

var t0 = time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)

// liveHost is a Host that holds one shuffle, runs background work on
// goroutines it waits for, counts the requests it sends by op and answers
// checks with status (pings fail as unreachable).
type liveHost struct {
	host
	sh     *Shuffle
	status string

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	sent    map[string]int
	dropped []string
	lookups int
}

func newLiveHost(sh *Shuffle, status string) *liveHost {
	h := &liveHost{sh: sh, status: status, sent: map[string]int{}}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	return h
}

// close ends the background work and waits for it.
func (h *liveHost) close() { h.cancel(); h.wg.Wait() }

func (h *liveHost) Held() []*Shuffle { return []*Shuffle{h.sh} }

func (h *liveHost) Lookup(string) (*Shuffle, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lookups++
	return h.sh, nil
}

func (h *liveHost) Background(fn func(context.Context)) {
	h.wg.Go(func() { fn(h.ctx) })
}

func (h *liveHost) Request(_ context.Context, _ string, c control.Msg) (control.Reply, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sent[c.Op]++
	if c.Op == control.OpCheck {
		return control.Reply{Status: h.status}, nil
	}
	return control.Reply{}, errors.New("unreachable")
}

func (h *liveHost) Drop(id, _ string, _ bool) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.dropped = append(h.dropped, id)
	return nil
}

// counts returns the requests sent of op, the lookups and the drops.
func (h *liveHost) counts(op string) (sent, lookups, dropped int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sent[op], h.lookups, len(h.dropped)
}

// TestRecheckOnClock: the rejoin checks tick every Recheck of the
// driver's clock, and a shuffle younger than Recheck on it is not asked
// about; a check whose coordinator answers closed drops the shuffle.
func TestRecheckOnClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := clock.NewFake(t0)
		sh := newShuffle(t, "b") // coordinated by b, node a a member
		sh.born = f.Now()
		h := newLiveHost(sh, control.StatusClosed)
		defer h.close()
		d := New(Config{Host: h, Log: testkit.Quiet(), Clock: f, Recheck: 10 * time.Second})
		d.recheckOne(h.ctx, sh)
		if sent, _, _ := h.counts(control.OpCheck); sent != 0 {
			t.Fatalf("%d checks about a shuffle born now, want none", sent)
		}
		d.RecheckLoop()
		synctest.Wait()
		f.Advance(10*time.Second - 1)
		synctest.Wait()
		if sent, _, dropped := h.counts(control.OpCheck); sent != 0 || dropped != 0 {
			t.Fatalf("before the first tick: %d checks, %d drops; want none", sent, dropped)
		}
		f.Advance(1)
		synctest.Wait()
		if sent, _, dropped := h.counts(control.OpCheck); sent != 1 || dropped != 1 {
			t.Fatalf("after a Recheck: %d checks, %d drops; want the coordinator asked once and the shuffle dropped", sent, dropped)
		}
	})
}

// TestSilenceOnClock: a member that did not answer a ping is not asked
// again until probeTimeout passed on the driver's clock.
func TestSilenceOnClock(t *testing.T) {
	f := clock.NewFake(t0)
	h := newLiveHost(newShuffle(t, "b"), control.StatusMember)
	defer h.close()
	d := New(Config{Host: h, Log: testkit.Quiet(), Clock: f})
	ctx, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0)) // one try, then given up on
	defer cancel()
	for i, step := range []struct {
		advance time.Duration
		asked   int
	}{
		{0, 1}, {0, 1}, {probeTimeout - 1, 1}, {1, 2},
	} {
		f.Advance(step.advance)
		if d.ping(ctx, "c", "s") {
			t.Fatalf("ping %d answered by a node that never answers", i)
		}
		if sent, _, _ := h.counts(control.OpPing); sent != step.asked {
			t.Fatalf("ping %d, %v after the last: %d pings sent in all, want %d", i, step.advance, sent, step.asked)
		}
	}
}

// TestFailoverLaterOnClock: a successor that dropped a takeover decides
// again takeoverRecheck later on the driver's clock, not before.
func TestFailoverLaterOnClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := clock.NewFake(t0)
		h := newLiveHost(newShuffle(t, "b"), control.StatusMember)
		defer h.close()
		d := New(Config{Host: h, Log: testkit.Quiet(), Clock: f})
		d.failoverLater(h.sh)
		synctest.Wait()
		f.Advance(takeoverRecheck - 1)
		synctest.Wait()
		if _, lookups, _ := h.counts(control.OpPing); lookups != 0 {
			t.Fatalf("looked the shuffle up %d times before takeoverRecheck passed", lookups)
		}
		f.Advance(1)
		synctest.Wait()
		if _, lookups, _ := h.counts(control.OpPing); lookups != 1 {
			t.Fatalf("looked the shuffle up %d times once takeoverRecheck passed, want 1", lookups)
		}
	})
}
