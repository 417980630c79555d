package receiver

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkSortedSegs sorts one partition's segments as a read does: n
// segments of distinct tasks out of tasks, in the order of parallel puts
// (random), one attempt and seq each. 260 of 10,000 is a partition of the
// 10,000 x 10,000 demo of 100 MiB (one row per segment); 1,600 of 10,000
// one of 1.6 M rows; 1,000 of 1,000 the 1,000 x 1,000 case.
func BenchmarkSortedSegs(b *testing.B) {
	for _, c := range []struct{ n, tasks int }{{260, 10000}, {1600, 10000}, {1000, 1000}, {26, 1000}} {
		b.Run(fmt.Sprintf("segs=%d/tasks=%d", c.n, c.tasks), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			segs := make([]accSeg, c.n)
			for i, t := range rng.Perm(c.tasks)[:c.n] {
				segs[i] = accSeg{task: uint64(t), off: int64(i), rows: 1}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				sortedSegs(segs)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*c.n), "ns/seg")
		})
	}
}
