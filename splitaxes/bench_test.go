package splitaxes

import (
	"fmt"
	"slices"
	"testing"
	"unsafe"
)

// BenchmarkAxis1M plans one axis of 1,000,000 old chunks (size 10) into
// 1,000,000 new chunks (sizes 9 and 11 alternating): every new chunk but the
// first takes pieces of two old chunks.
func BenchmarkAxis1M(b *testing.B) {
	const n = 1_000_000
	old, new := make([]int64, n), make([]int64, n)
	for i := range n {
		old[i], new[i] = 10, int64(9+2*(i%2))
	}
	b.ReportAllocs()
	var a *Axis
	for b.Loop() {
		var err error
		if a, err = NewAxis(old, new); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(2*n), "ns/chunk")
	b.ReportMetric(float64(retained(a))/(2*n), "B/chunk")
	b.ReportMetric(float64(len(a.pieces)), "pieces")
}

// retained is the memory an Axis holds on to.
func retained(a *Axis) int {
	return cap(a.pieces)*int(unsafe.Sizeof(piece{})) + 4*(cap(a.oldOff)+cap(a.newOff)) + 8*(cap(a.oldStart)+cap(a.newStart))
}

// BenchmarkAxis1MIterate walks every split of every old chunk of the plan.
func BenchmarkAxis1MIterate(b *testing.B) {
	const n = 1_000_000
	old, new := make([]int64, n), make([]int64, n)
	for i := range n {
		old[i], new[i] = 10, int64(9+2*(i%2))
	}
	a, err := NewAxis(old, new)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var total int64
	for b.Loop() {
		for i := range n {
			for s := range a.Splits(i) {
				total += s.Stop - s.Start
			}
		}
	}
	if total != int64(b.N)*10*n {
		b.Fatalf("covered %d", total)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/oldchunk")
}

// BenchmarkRunAxisCyclic plans a block-cyclic axis of n blocks (block size
// 10, 64 processes) against n regular chunks of 10 offset by 5, so every
// chunk takes two stretches: the time per run should stay flat as n grows.
func BenchmarkRunAxisCyclic(b *testing.B) {
	for _, n := range []int64{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			total := n * 10
			newSizes := slices.Repeat([]int64{10}, int(n))
			newSizes[0] = 5
			newSizes = append(newSizes, 5)
			old := &Dist{Type: Cyclic, Size: total, BlockSize: 10}
			oldSizes := CyclicSizes(total, 64, 10)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := NewDistAxis(oldSizes, old, newSizes, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(2*n), "ns/run")
		})
	}
}
