package dedup

import (
	"fmt"
	"runtime"
	"testing"
)

// BenchmarkLedgerMemory builds a ledger of 10000 tasks x 10000 partitions
// where every task commits once. "all" is the worst case (one receiver owns
// every partition); "quarter" is a receiver of a 4-node cluster owning every
// 4th partition. It reports the live heap the ledger holds and its own
// estimate (Stats.MemoryBytes).
func BenchmarkLedgerMemory(b *testing.B) {
	const tasks, parts = 10000, 10000
	for _, stride := range []int{1, 4} {
		name := map[int]string{1: "all", 4: "quarter"}[stride]
		b.Run(name, func(b *testing.B) {
			owned := NewBitset(parts)
			for p := 0; p < parts; p += stride {
				owned.Set(p)
			}
			b.ReportAllocs()
			var heap, est int
			for b.Loop() {
				before := liveHeap()
				l := NewLedger(tasks, parts)
				for task := range uint64(tasks) {
					if _, err := l.Commit(task, 0, owned); err != nil {
						b.Fatal(err)
					}
				}
				heap, est = liveHeap()-before, l.Stats().MemoryBytes
				runtime.KeepAlive(l)
			}
			b.ReportMetric(float64(heap), "heap-B")
			b.ReportMetric(float64(est), "stats-B")
			b.ReportMetric(float64(heap)/tasks/parts*8, "bits/pair")
		})
	}
}

// BenchmarkLedgerCommit measures Commit of one task's 10000-partition set
// when an earlier attempt already committed half of them.
func BenchmarkLedgerCommit(b *testing.B) {
	const tasks, parts = 1000, 10000
	half, all := NewBitset(parts), NewBitset(parts)
	for p := range parts {
		all.Set(p)
		if p%2 == 0 {
			half.Set(p)
		}
	}
	b.ReportAllocs()
	b.SetBytes(parts / 8)
	l := NewLedger(tasks, parts)
	i := uint64(0)
	for b.Loop() {
		task := i % tasks
		if i%tasks == 0 {
			l = NewLedger(tasks, parts)
		}
		l.Commit(task, 0, half)
		if _, err := l.Commit(task, 1, all); err != nil {
			b.Fatal(fmt.Errorf("commit: %w", err))
		}
		i++
	}
}

// liveHeap returns the live heap after a GC.
func liveHeap() int {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return int(ms.HeapAlloc)
}

// BenchmarkLedgerVisible asks Visible as a read does: for one partition
// after another, of every task in turn (10000 tasks x 10000 partitions,
// each task committed once with every 4th partition, a 4-node cluster's
// receiver). The ledger is 12.5 MB, larger than this machine's caches
// hold for it, as in a shuffle whose rows pass through them meanwhile.
func BenchmarkLedgerVisible(b *testing.B) {
	const tasks, parts = 10000, 10000
	owned := NewBitset(parts)
	for p := 0; p < parts; p += 4 {
		owned.Set(p)
	}
	l := NewLedger(tasks, parts)
	for task := range uint64(tasks) {
		if _, err := l.Commit(task, 0, owned); err != nil {
			b.Fatal(err)
		}
	}
	p, seen := uint32(0), 0
	for b.Loop() {
		for task := range uint64(tasks) {
			if l.Visible(task, 0, p) {
				seen++
			}
		}
		p = (p + 4) % parts
	}
	if seen != b.N*tasks {
		b.Fatalf("%d of %d visible", seen, b.N*tasks)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tasks), "ns/call")
}
