package service_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/simnet"
)

// TestSimScaleMemory creates a 100,000 x 100,000 dataframe shuffle on four
// nodes in the in-memory network and puts its first 1,000 tasks (a row
// each, every one committed at every receiver), then checks the heap its
// per-shuffle structures hold (the coordinator's tracker, the receivers'
// ledgers and accumulators, ownership, the senders' and receivers'
// per-task state):
//
//	after the create:      nodes x (512 B x tasks + 512 B x partitions)
//	growth over the puts:  put tasks x nodes x 2 KiB
//
// that is O(tasks + partitions + nodes), and a put task costs the same at
// any partition count: one bit per (task, partition) at each receiver
// alone would be 5 GB in all, and 50 KB per put task.
func TestSimScaleMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("creates a 100,000 x 100,000 shuffle")
	}
	const nodes, tasks, partitions, put = 4, 100_000, 100_000, 1000
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := startSim(t, nodes, service.Config{}, simnet.DefaultConfig())
	f := newFrame("scale", tasks, partitions, tasks, 11)
	f.gen.PayloadBytes = 4
	start := heapInUse()
	if err := c.svcs[0].Create(ctx, f.spec()); err != nil {
		t.Fatal(err)
	}
	created := heapInUse()
	checkHeap(t, "after the create", created-min(created, start), nodes*(512*tasks+512*partitions))
	list := make([]uint64, put)
	for i := range list {
		list[i] = uint64(i)
	}
	c.putAll(ctx, f.spec(), f.input(), list)
	for i, s := range c.svcs {
		if p, err := s.Progress(f.id); err == nil && p.TasksDone != put {
			t.Errorf("node-%d coordinates with %d tasks done, want %d", i, p.TasksDone, put)
		}
	}
	grown := heapInUse()
	checkHeap(t, "growth over the puts", grown-min(grown, created), put*nodes*2048)
}

// checkHeap fails t if held bytes of heap are over bound.
func checkHeap(t *testing.T, what string, held uint64, bound int) {
	t.Helper()
	t.Logf("heap %s: %d bytes (bound %d)", what, held, bound)
	if held > uint64(bound) {
		t.Errorf("heap %s: %d bytes, over the bound %d", what, held, bound)
	}
}

// heapInUse is the live heap after a collection.
func heapInUse() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
