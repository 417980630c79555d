package barrier

import (
	"fmt"
	"runtime"
	"testing"
)

// BenchmarkTracker runs whole shuffles of 10000 tasks x 16 receivers: one
// TaskDone and 16 Committed per task, half of the commits before the
// TaskDone. It reports events/s and the Tracker's heap per shuffle.
func BenchmarkTracker(b *testing.B) {
	const tasks, nrecv = 10000, 16
	receivers := make([]string, nrecv)
	sent := make(map[string]Totals, nrecv)
	for i := range receivers {
		receivers[i] = fmt.Sprintf("node-%02d", i)
		sent[receivers[i]] = Totals{Pieces: 3, Rows: 1000, Bytes: 1 << 16, Checksum: uint64(i)}
	}
	cfg := Config{Shuffle: "bench", Tasks: tasks, Receivers: receivers}
	b.ReportAllocs()
	var heap uint64
	for b.Loop() {
		before := heapInUse()
		tr, _ := New(cfg)
		if !runShuffle(b, tr, receivers, sent) {
			b.Fatal("not sealed")
		}
		heap = heapInUse() - before
		runtime.KeepAlive(tr)
	}
	events := float64(b.N) * tasks * (nrecv + 1)
	b.ReportMetric(events/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(heap), "tracker-B")
}

// runShuffle feeds every report of a correct shuffle and says if it sealed.
func runShuffle(b *testing.B, tr *Tracker, receivers []string, sent map[string]Totals) bool {
	sealed := false
	for task := range uint64(tr.Progress().Tasks) {
		for _, r := range receivers[:len(receivers)/2] {
			d, _ := tr.Committed(r, task, 0, sent[r])
			sealed = sealed || d.Seal
		}
		d, _ := tr.TaskDone(task, 0, "sender", sent)
		sealed = sealed || d.Seal
		for _, r := range receivers[len(receivers)/2:] {
			d, _ := tr.Committed(r, task, 0, sent[r])
			sealed = sealed || d.Seal
		}
	}
	return sealed
}

// heapInUse returns the live heap after a GC.
func heapInUse() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
