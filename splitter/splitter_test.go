package splitter

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/shard"
	"github.com/shufflenode/shufflenode/splitaxes"
)

// fakeSender records delivered entries; fail decides per call what to return.
type fakeSender struct {
	mu      sync.Mutex
	got     map[string]int // "shuffle/dest/task/attempt/seq" -> deliveries
	batches int
	fail    func(b *Batch, call int) error
	calls   int
	gate    chan struct{} // if non-nil, Send waits for a value
}

func newFake() *fakeSender { return &fakeSender{got: map[string]int{}} }

func (f *fakeSender) Send(ctx context.Context, b *Batch) error {
	if f.gate != nil {
		select {
		case <-f.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.fail != nil {
		if err := f.fail(b, f.calls); err != nil {
			return err
		}
	}
	f.batches++
	for _, e := range b.Entries {
		f.got[fmt.Sprintf("%s/%s/%d/%d/%d", b.Shuffle, b.Dest, e.Task, e.Attempt, e.Seq)]++
	}
	return nil
}

func entry(task uint64, seq uint32, n int) shard.Entry {
	return shard.Entry{Task: task, Seq: seq, Runs: []shard.Run{{Partition: 1, Count: 1}}, Data: make([]byte, n)}
}

// endWait queues an end marker and returns a channel with its outcome.
func endWait(t *testing.T, s *Splitter, shuffle, dest string, task uint64) <-chan error {
	t.Helper()
	ch := make(chan error, 1)
	if err := s.End(shuffle, 0, dest, End{End: shard.End{Task: task}, Done: func(err error) { ch <- err }}); err != nil {
		ch <- err
	}
	return ch
}

func TestConservation(t *testing.T) {
	for _, tc := range []struct {
		name          string
		buffer, limit int64
		inflight      int
	}{
		{"tiny buffers", 100, 1 << 20, 1},
		{"big buffers", 1 << 20, 4 << 20, 2},
		{"tiny budget", 1 << 20, 300, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			s, err := New(Config{BufferBytes: tc.buffer, MemoryLimit: tc.limit, MaxInFlight: tc.inflight}, f)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			rng := rand.New(rand.NewPCG(1, 2))
			dests := []string{"a", "b", "c"}
			want := map[string]int{}
			var ends []<-chan error
			for task := range uint64(20) {
				for seq := range uint32(5) {
					d := dests[rng.IntN(len(dests))]
					if err := s.Add(context.Background(), "s1", 0, d, entry(task, seq, rng.IntN(200))); err != nil {
						t.Fatal(err)
					}
					want[fmt.Sprintf("s1/%s/%d/0/%d", d, task, seq)] = 1
				}
				for _, d := range dests {
					ends = append(ends, endWait(t, s, "s1", d, task))
				}
			}
			for _, ch := range ends {
				if err := <-ch; err != nil {
					t.Fatal(err)
				}
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			if len(f.got) != len(want) {
				t.Fatalf("delivered %d distinct entries, want %d", len(f.got), len(want))
			}
			for k, n := range f.got {
				if want[k] != n {
					t.Fatalf("entry %s delivered %d times", k, n)
				}
			}
			if st := s.Stats(); st.BufferedBytes != 0 || st.PeakBytes > max(tc.limit, 300) {
				t.Fatalf("stats after drain: %+v", st)
			}
		})
	}
}

func TestBackPressureWaitsForAck(t *testing.T) {
	f := newFake()
	f.gate = make(chan struct{})
	s, _ := New(Config{BufferBytes: 1 << 20, MemoryLimit: 1000, MaxInFlight: 1}, f)
	defer s.Close()
	ctx := context.Background()
	if err := s.Add(ctx, "s", 0, "a", entry(0, 0, 900)); err != nil {
		t.Fatal(err)
	}
	added := make(chan error, 1)
	go func() { added <- s.Add(ctx, "s", 0, "a", entry(0, 1, 900)) }()
	select {
	case err := <-added:
		t.Fatalf("second Add returned %v before the first batch was acknowledged", err)
	case <-time.After(50 * time.Millisecond):
	}
	f.gate <- struct{}{} // acknowledge the flushed first batch
	if err := <-added; err != nil {
		t.Fatal(err)
	}
	close(f.gate)
}

func TestAddHonoursContext(t *testing.T) {
	f := newFake()
	f.gate = make(chan struct{})
	defer close(f.gate)
	s, _ := New(Config{MemoryLimit: 100, MaxInFlight: 1}, f)
	defer s.Close()
	_ = s.Add(context.Background(), "s", 0, "a", entry(0, 0, 90))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Add(ctx, "s", 0, "a", entry(0, 1, 90)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Add with cancelled context = %v", err)
	}
}

func TestBusyIsRetried(t *testing.T) {
	f := newFake()
	f.fail = func(b *Batch, call int) error {
		if call <= 3 {
			return Retryable(errors.New("busy"), time.Millisecond)
		}
		return nil
	}
	s, _ := New(Config{}, f)
	defer s.Close()
	_ = s.Add(context.Background(), "s", 0, "a", entry(0, 0, 10))
	if err := <-endWait(t, s, "s", "a", 0); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Retries != 3 || st.Messages != 1 {
		t.Fatalf("stats %+v, want 3 retries and 1 message", st)
	}
}

func TestPermanentFailureFailsQueue(t *testing.T) {
	boom := errors.New("refused: stale epoch")
	f := newFake()
	f.fail = func(b *Batch, call int) error {
		if b.Shuffle == "s" && b.Dest == "bad" {
			return boom
		}
		return nil
	}
	s, _ := New(Config{}, f)
	defer s.Close()
	ctx := context.Background()
	_ = s.Add(ctx, "s", 0, "bad", entry(0, 0, 10))
	if err := <-endWait(t, s, "s", "bad", 0); !errors.Is(err, boom) {
		t.Fatalf("end on failed queue = %v, want %v", err, boom)
	}
	if err := s.Add(ctx, "s", 0, "bad", entry(1, 0, 10)); !errors.Is(err, boom) {
		t.Fatalf("Add after failure = %v", err)
	}
	if err := <-endWait(t, s, "other", "bad", 0); err != nil {
		t.Fatalf("other shuffle affected: %v", err)
	}
	if st := s.Stats(); st.BufferedBytes != 0 {
		t.Fatalf("memory not returned: %+v", st)
	}
}

func TestTransportFailureGivesUp(t *testing.T) {
	f := newFake()
	f.fail = func(*Batch, int) error { return Retryable(errors.New("connection reset"), 0) }
	s, _ := New(Config{MaxRetries: 2, RetryBase: time.Millisecond, RetryMax: time.Millisecond}, f)
	defer s.Close()
	if err := <-endWait(t, s, "s", "a", 0); !errors.Is(err, ErrGaveUp) {
		t.Fatalf("err = %v, want ErrGaveUp", err)
	}
	if f.calls != 3 {
		t.Fatalf("%d calls, want 3", f.calls)
	}
}

func TestForgetCompletesPending(t *testing.T) {
	f := newFake()
	f.gate = make(chan struct{})
	s, _ := New(Config{MaxInFlight: 1}, f)
	defer s.Close()
	ch := endWait(t, s, "s", "a", 0)
	s.Forget("s")
	if err := <-ch; err == nil {
		t.Fatal("pending end succeeded after Forget")
	}
	close(f.gate)
}

func TestCloseIsIdempotent(t *testing.T) {
	s, _ := New(Config{}, newFake())
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Add(context.Background(), "s", 0, "a", entry(0, 0, 1)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Add after Close = %v", err)
	}
}

func BenchmarkAddSend(b *testing.B) {
	s, _ := New(Config{}, newFakeNop())
	defer s.Close()
	data := make([]byte, 64<<10)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	ctx := context.Background()
	for i := range b.N {
		_ = s.Add(ctx, "s", 0, "a", shard.Entry{Task: uint64(i), Data: data})
	}
	<-endWaitB(s)
}

type nopSender struct{}

func newFakeNop() Sender                             { return nopSender{} }
func (nopSender) Send(context.Context, *Batch) error { return nil }

func endWaitB(s *Splitter) <-chan error {
	ch := make(chan error, 1)
	_ = s.End("s", 0, "a", End{Done: func(err error) { ch <- err }})
	return ch
}

// TestForgetBeforeRefusesOlderEpochs: after ForgetBefore(s, 2), Adds and
// Ends of shuffle s for epochs before 2 fail with ErrForgotten at once (no
// queue is opened for them), epoch 2 still works, other shuffles are not
// touched, and Drop forgets the floor.
func TestForgetBeforeRefusesOlderEpochs(t *testing.T) {
	s, err := New(Config{}, nopSender{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	s.ForgetBefore("s", 2)
	if err := s.Add(ctx, "s", 1, "a", entry(0, 0, 10)); !errors.Is(err, ErrForgotten) {
		t.Fatalf("Add of epoch 1: %v, want ErrForgotten", err)
	}
	if err := s.End("s", 1, "a", End{Done: func(error) {}}); !errors.Is(err, ErrForgotten) {
		t.Fatalf("End of epoch 1: %v, want ErrForgotten", err)
	}
	if err := s.Add(ctx, "s", 2, "a", entry(0, 0, 10)); err != nil {
		t.Fatalf("Add of epoch 2: %v", err)
	}
	if err := s.Add(ctx, "other", 0, "a", entry(0, 0, 10)); err != nil {
		t.Fatalf("Add to another shuffle: %v", err)
	}
	s.Drop("s")
	if err := s.Add(ctx, "s", 0, "a", entry(0, 0, 10)); err != nil {
		t.Fatalf("Add after Drop: %v", err)
	}
}

// TestEndWaitsForEarlierBatches: with two messages in flight to a peer,
// a receiver busy with the first (the entries) may take the second (the
// end marker) first; the marker's Done still waits until the entries are
// in, so that a task reported done has every entry at every receiver.
func TestEndWaitsForEarlierBatches(t *testing.T) {
	f := newFake()
	release := make(chan struct{})
	f.fail = func(b *Batch, call int) error {
		if len(b.Ends) > 0 {
			return nil
		}
		select {
		case <-release:
			return nil
		default:
			return Retryable(errors.New("busy"), time.Millisecond)
		}
	}
	s, _ := New(Config{MaxInFlight: 2, BufferBytes: 1}, f)
	defer s.Close()
	_ = s.Add(context.Background(), "s", 0, "a", entry(0, 0, 10)) // over BufferBytes: sent at once
	done := endWait(t, s, "s", "a", 0)
	select {
	case err := <-done:
		t.Fatalf("end reported (%v) before the entries sent ahead of it were in", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := f.got["s/a/0/0/0"]; n != 1 {
		t.Fatalf("entry delivered %d times, want 1", n)
	}
}

// TestEndAfterFailedBatchFails: an end marker acknowledged after an
// earlier message to the same peer failed for good reports that failure:
// the entries before it did not all arrive.
func TestEndAfterFailedBatchFails(t *testing.T) {
	boom := errors.New("refused")
	f := newFake()
	f.fail = func(b *Batch, call int) error {
		if len(b.Ends) == 0 {
			time.Sleep(20 * time.Millisecond) // the marker's message is acknowledged first
			return boom
		}
		return nil
	}
	s, _ := New(Config{MaxInFlight: 2, BufferBytes: 1}, f)
	defer s.Close()
	_ = s.Add(context.Background(), "s", 0, "a", entry(0, 0, 10))
	if err := <-endWait(t, s, "s", "a", 0); !errors.Is(err, boom) {
		t.Fatalf("end = %v, want %v", err, boom)
	}
}

// TestAddReleasedReleasesOnce: an entry's release runs exactly once, after
// its message was sent or failed for good, or at once when AddReleased
// refuses it; never while the Sender may still read the entry.
func TestAddReleasedReleasesOnce(t *testing.T) {
	boom := errors.New("refused: stale epoch")
	f := newFake()
	var sending sync.Map // entry seq -> released while in Send
	var mu sync.Mutex
	var released [3]int
	f.fail = func(b *Batch, _ int) error {
		mu.Lock()
		for _, e := range b.Entries {
			if released[e.Seq] != 0 {
				sending.Store(e.Seq, true)
			}
		}
		mu.Unlock()
		if b.Dest == "bad" {
			return boom
		}
		return nil
	}
	s, _ := New(Config{}, f)
	defer s.Close()
	ctx := context.Background()
	release := func(seq uint32) func() {
		return func() { mu.Lock(); released[seq]++; mu.Unlock() }
	}
	add := func(dest string, seq uint32) error {
		e := entry(0, seq, 10)
		return s.AddReleased(ctx, "s", 0, dest, e, release(seq))
	}
	if err := add("good", 0); err != nil {
		t.Fatal(err)
	}
	if err := add("bad", 1); err != nil {
		t.Fatal(err)
	}
	for _, dest := range []string{"good", "bad"} {
		<-endWait(t, s, "s", dest, 0)
	}
	if err := add("bad", 2); !errors.Is(err, boom) {
		t.Fatalf("AddReleased after the queue failed: %v, want %v", err, boom)
	}
	mu.Lock()
	defer mu.Unlock()
	if released != [3]int{1, 1, 1} {
		t.Fatalf("releases per entry %v, want one each (sent, failed, refused)", released)
	}
	sending.Range(func(k, _ any) bool { t.Fatalf("entry %v released before its send", k); return false })
}

// BenchmarkCutChunk cuts old chunks of a (1000, 1000) f8 array, (10, 1000)
// each, into the pieces of new chunks of (1000, 10), for 4 destinations,
// through a splitter whose sends succeed at once: the send side of the
// bench's array rechunk, at a tenth of its chunk size. Bytes are the old
// chunks'.
func BenchmarkCutChunk(b *testing.B) {
	b.Run("(10,1000)->(1000,10)", func(b *testing.B) { benchCutChunk(b, 10) })
	b.Run("(1,1000)->(1000,1)", func(b *testing.B) { benchCutChunk(b, 1) })
}

// benchCutChunk cuts old chunks of (slab, 1000) into new chunks of
// (1000, slab).
func benchCutChunk(b *testing.B, slab int64) {
	n := int(1000 / slab)
	slabs := slices.Repeat([]int64{slab}, n)
	plan, err := splitaxes.New([][]int64{slabs, {1000}}, [][]int64{{1000}, slabs})
	if err != nil {
		b.Fatal(err)
	}
	dt, _ := rechunk.ParseDType("<f8")
	src := rechunk.Chunk{DType: dt, Shape: []int64{slab, 1000}, Data: make([]byte, slab*1000*8)}
	s, _ := New(Config{}, newFakeNop())
	defer s.Close()
	dests := []string{"a", "b", "c", "d"}
	primary := make([]int, n)
	for p := range primary {
		primary[p] = p % len(dests)
	}
	ctx := context.Background()
	b.SetBytes(int64(len(src.Data)))
	b.ReportAllocs()
	for i := range b.N {
		c := s.NewCut(Route{Shuffle: "s", Task: uint64(i % n), Attempt: uint32(i / n), Dests: dests, Primary: primary})
		if err := c.Chunk(ctx, plan, src); err != nil {
			b.Fatal(err)
		}
	}
	for _, d := range dests {
		<-endWaitTo(s, d)
	}
}

func endWaitTo(s *Splitter, dest string) <-chan error {
	ch := make(chan error, 1)
	_ = s.End("s", 0, dest, End{Done: func(err error) { ch <- err }})
	return ch
}
