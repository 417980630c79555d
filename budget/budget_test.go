package budget

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/internal/testkit"
)

// acquireAsync starts Acquire(n) and returns a channel that yields its
// result.
func acquireAsync(ctx context.Context, b *Budget, n int64) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := b.Acquire(ctx, n)
		done <- err
	}()
	return done
}

// waitQueued waits until n Acquires are queued.
func waitQueued(t *testing.T, b *Budget, n int) {
	t.Helper()
	testkit.WaitFor(t, 5*time.Second, fmt.Sprintf("%d queued Acquires", n), func() bool { return b.Waiting() == n })
}

// notYet fails if done has a result.
func notYet(t *testing.T, done <-chan error, what string) {
	t.Helper()
	select {
	case err := <-done:
		t.Fatalf("%s returned (%v) while it should wait", what, err)
	default:
	}
}

func TestAcquireWaitsForRoom(t *testing.T) {
	ctx := context.Background()
	b := New(100)
	if got, err := b.Acquire(ctx, 60); got != 60 || err != nil {
		t.Fatalf("Acquire(60) = %d, %v", got, err)
	}
	done := acquireAsync(ctx, b, 50)
	waitQueued(t, b, 1)
	notYet(t, done, "Acquire(50) with 60 of 100 used")
	b.Release(60)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if b.Used() != 50 {
		t.Fatalf("used %d, want 50", b.Used())
	}
}

// A large request at the head is not overtaken by a small one that fits.
func TestAcquireInArrivalOrder(t *testing.T) {
	ctx := context.Background()
	b := New(100)
	b.Acquire(ctx, 60)
	big := acquireAsync(ctx, b, 80)
	waitQueued(t, b, 1)
	small := acquireAsync(ctx, b, 30)
	waitQueued(t, b, 2)
	notYet(t, small, "Acquire(30) behind a waiting Acquire(80)")
	b.Release(60)
	if err := <-big; err != nil {
		t.Fatal(err)
	}
	notYet(t, small, "Acquire(30) with 80 of 100 used")
	b.Release(80)
	if err := <-small; err != nil {
		t.Fatal(err)
	}
}

// A request past the size gets the whole budget, once nothing else is held.
func TestAcquireLargerThanBudget(t *testing.T) {
	ctx := context.Background()
	b := New(100)
	b.Acquire(ctx, 1)
	var got int64
	done := make(chan error, 1)
	go func() {
		var err error
		got, err = b.Acquire(ctx, 1000)
		done <- err
	}()
	waitQueued(t, b, 1)
	notYet(t, done, "Acquire(1000) while 1 byte is held")
	b.Release(1)
	if err := <-done; err != nil || got != 100 {
		t.Fatalf("Acquire(1000) = %d, %v; want the whole budget, 100", got, err)
	}
}

// A waiter whose context ends leaves the queue, and the ones behind it go
// on.
func TestAcquireCanceled(t *testing.T) {
	b := New(100)
	b.Acquire(context.Background(), 50)
	ctx, cancel := context.WithCancel(context.Background())
	head := acquireAsync(ctx, b, 90)
	waitQueued(t, b, 1)
	next := acquireAsync(context.Background(), b, 40)
	waitQueued(t, b, 2)
	cancel()
	if err := <-head; !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled Acquire: %v", err)
	}
	if err := <-next; err != nil {
		t.Fatal(err)
	}
	if b.Used() != 90 || b.Waiting() != 0 {
		t.Fatalf("used %d with %d waiting, want 90 and 0", b.Used(), b.Waiting())
	}
}

// Charge overdraws the budget; Acquires wait until it is paid back.
func TestChargeOverdraws(t *testing.T) {
	ctx := context.Background()
	b := New(100)
	b.Charge(150)
	done := acquireAsync(ctx, b, 10)
	waitQueued(t, b, 1)
	b.Release(50)
	notYet(t, done, "Acquire(10) with 100 of 100 used")
	b.Release(10)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Many goroutines acquiring at once never hold more than the size
// together, and every one is served.
func TestAcquireConcurrent(t *testing.T) {
	const size, workers, rounds = 1000, 8, 200
	b := New(size)
	var held, peak atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for range rounds {
				n, err := b.Acquire(context.Background(), rng.Int64N(size/2)+1)
				if err != nil {
					t.Error(err)
					return
				}
				h := held.Add(n)
				for p := peak.Load(); h > p && !peak.CompareAndSwap(p, h); p = peak.Load() {
				}
				held.Add(-n)
				b.Release(n)
			}
		})
	}
	wg.Wait()
	if p := peak.Load(); p > size || p == 0 {
		t.Fatalf("peak held %d, want 1..%d", p, size)
	}
	if b.Used() != 0 || b.Waiting() != 0 {
		t.Fatalf("used %d with %d waiting after every release", b.Used(), b.Waiting())
	}
}
