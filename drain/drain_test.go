package drain

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/receiver"
	"github.com/shufflenode/shufflenode/shard"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/wire"
)

var (
	errConflict    = errors.New("test: conflict")
	errUnavailable = errors.New("test: unavailable")
)

// fakeHost holds no shuffle; it counts running puts down and records the
// frames sent.
type fakeHost struct {
	running atomic.Int64
	mu      sync.Mutex
	sent    [][]byte
	busy    int // Send answers busy this many times first
}

func (h *fakeHost) Name() string                         { return "n0" }
func (h *fakeHost) Log() *slog.Logger                    { return slog.New(slog.DiscardHandler) }
func (h *fakeHost) RunningPuts() int                     { return int(h.running.Load()) }
func (h *fakeHost) Held() []*shuffle.State               { return nil }
func (h *fakeHost) CommitsBusy(*shuffle.State) bool      { return false }
func (h *fakeHost) Publish(*shuffle.State)               {}
func (h *fakeHost) Go(fn func(ctx context.Context)) bool { go fn(context.Background()); return true }
func (h *fakeHost) IsMember(string) bool                 { return true }
func (h *fakeHost) Lookup(id string) (*shuffle.State, *receiver.Shuffle, error) {
	return nil, nil, errors.New("test: unknown shuffle " + id)
}
func (h *fakeHost) Request(context.Context, string, control.Msg) (control.Reply, error) {
	return control.Reply{}, errUnavailable
}

func (h *fakeHost) Send(_ context.Context, _ string, t wire.Type, body []byte) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if t != TypeHandOver {
		return errors.New("test: frame type")
	}
	if h.busy > 0 {
		h.busy--
		return wire.ErrBusy
	}
	h.sent = append(h.sent, bytes.Clone(body))
	return nil
}

func newTest(h *fakeHost) *Drainer {
	return New(Config{Host: h, Conflict: errConflict, Unavailable: errUnavailable,
		PeerError: func(id, node string, err error) error { return err }})
}

func TestDrainWaitsForPutsThenLeaves(t *testing.T) {
	h := &fakeHost{}
	h.running.Store(1)
	d := newTest(h)
	if err := d.Refusal("s", shuffle.AttemptKey{Task: 1}); err != nil {
		t.Fatalf("refusal before a drain: %v", err)
	}
	done := make(chan Result, 1)
	go func() {
		res, err := d.Drain(context.Background())
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	for !d.Draining() {
		time.Sleep(time.Millisecond)
	}
	err := d.Refusal("s", shuffle.AttemptKey{Task: 3, Attempt: 1})
	if !errors.Is(err, errUnavailable) || !errors.Is(err, ErrDraining) {
		t.Errorf("refusal while draining: %v, want the unavailable sentinel and ErrDraining", err)
	}
	if _, err := d.Drain(context.Background()); !errors.Is(err, errConflict) {
		t.Errorf("second drain: %v, want the conflict sentinel", err)
	}
	select {
	case res := <-done:
		t.Fatalf("drain ended with a put running: %+v", res)
	case <-time.After(3 * poll):
	}
	h.running.Store(0)
	res := <-done
	if !res.HandedOver || res.HandedBytes != 0 {
		t.Errorf("drain holding nothing: %+v, want handed over with no bytes", res)
	}
	if !d.Draining() {
		t.Error("puts no longer refused after the drain")
	}
}

func TestDrainCancelledFallsBack(t *testing.T) {
	h := &fakeHost{}
	h.running.Store(1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := newTest(h).Drain(ctx)
	if err != nil || res.HandedOver || res.Why == "" {
		t.Errorf("killed drain: %+v, %v: want a fallback with a reason", res, err)
	}
}

func TestRequestOnce(t *testing.T) {
	d := newTest(&fakeHost{})
	c := d.Requested()
	d.Request()
	d.Request()
	select {
	case <-c:
	default:
		t.Fatal("Requested not closed after Request")
	}
}

// TestBatcherKeepsGroups sends pieces of several (task, attempt,
// partition) groups: every message decodes, no group is split between
// messages, each group has one end marker, and every byte is counted.
func TestBatcherKeepsGroups(t *testing.T) {
	h := &fakeHost{busy: 2}
	b := &batcher{d: newTest(h), to: "n1", m: shard.Msg{Shuffle: "s", Epoch: 1}}
	ctx := context.Background()
	piece := make([]byte, handOverBatch/3)
	var want int64
	for task := range uint64(4) {
		for seq := range uint32(2) {
			e := shard.Entry{Task: task, Attempt: 1, Seq: seq, Runs: []shard.Run{{Partition: uint32(task % 2)}}, Data: piece}
			if err := b.add(ctx, e, shard.PartSum{Partition: uint32(task % 2)}); err != nil {
				t.Fatal(err)
			}
			want += int64(len(piece))
		}
	}
	if err := b.flush(ctx); err != nil {
		t.Fatal(err)
	}
	if b.sent != want {
		t.Errorf("sent %d bytes, want %d", b.sent, want)
	}
	seen := map[uint64]bool{}
	for i, body := range h.sent {
		m, err := shard.Decode(body)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		tasks := map[uint64]int{}
		for _, e := range m.Entries {
			tasks[e.Task]++
		}
		for task, n := range tasks {
			if n != 2 || seen[task] {
				t.Errorf("message %d: task %d has %d of its 2 pieces (seen before: %v)", i, task, n, seen[task])
			}
			seen[task] = true
		}
		if len(m.Ends) != len(tasks) {
			t.Errorf("message %d: %d end markers for %d groups", i, len(m.Ends), len(tasks))
		}
	}
	if len(h.sent) < 2 || len(seen) != 4 {
		t.Errorf("%d messages carrying %d groups, want several carrying 4", len(h.sent), len(seen))
	}
}

func TestHandleFrameRefuses(t *testing.T) {
	d := newTest(&fakeHost{})
	unknown := shard.AppendMsg(nil, &shard.Msg{Shuffle: "nope", Epoch: 1})
	for _, tc := range []struct {
		name string
		body []byte
		want wire.RefusalCode
	}{
		{"garbage", []byte{1, 2, 3}, wire.RefuseBadRequest},
		{"unknown shuffle", unknown, wire.RefuseUnknownShuffle},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r *shuffle.Refusal
			err := d.HandleFrame(context.Background(), tc.body)
			if !errors.As(err, &r) || r.Code != tc.want {
				t.Errorf("HandleFrame: %v, want refusal code %v", err, tc.want)
			}
		})
	}
}
