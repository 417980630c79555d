package splitaxes_test

import (
	"fmt"

	"github.com/shufflenode/shufflenode/splitaxes"
)

func ExampleNewAxis() {
	a, err := splitaxes.NewAxis([]int64{10, 10, 10, 10, 10}, []int64{25, 5, 20})
	if err != nil {
		fmt.Println(err)
		return
	}
	for old := range a.NumOld() {
		for s := range a.Splits(old) {
			fmt.Printf("old %d -> new %d split %d [%d, %d)\n", old, s.NewChunk, s.SplitIndex, s.Start, s.Stop)
		}
	}
	// Output:
	// old 0 -> new 0 split 0 [0, 10)
	// old 1 -> new 0 split 1 [0, 10)
	// old 2 -> new 0 split 2 [0, 5)
	// old 2 -> new 1 split 0 [5, 10)
	// old 3 -> new 2 split 0 [0, 10)
	// old 4 -> new 2 split 1 [0, 10)
}

func ExamplePlan_NDSplits() {
	p, err := splitaxes.New([][]int64{{4, 4}, {6}}, [][]int64{{8}, {3, 3}})
	if err != nil {
		fmt.Println(err)
		return
	}
	splits, err := p.NDSplits([]int{1, 0})
	if err != nil {
		fmt.Println(err)
		return
	}
	for s := range splits {
		fmt.Println("new", s.NewChunk, "split", s.SplitIndex, "slices", s.Slices, "offsets", s.Offsets)
	}
	n, _ := p.NumPieces([]int{0, 1})
	fmt.Println("pieces of new chunk [0 1]:", n)
	// Output:
	// new [0 0] split [1 0] slices [{0 4} {0 3}] offsets [4 0]
	// new [0 1] split [1 0] slices [{0 4} {3 6}] offsets [4 0]
	// pieces of new chunk [0 1]: 2
}

func ExampleAxis_Pieces() {
	a, err := splitaxes.NewAxis([]int64{10, 10, 10, 10, 10}, []int64{25, 5, 20})
	if err != nil {
		fmt.Println(err)
		return
	}
	for s := range a.Pieces(0) {
		fmt.Printf("split %d from old %d [%d, %d) at offset %d\n", s.SplitIndex, s.OldChunk, s.Start, s.Stop, s.Offset)
	}
	// Output:
	// split 0 from old 0 [0, 10) at offset 0
	// split 1 from old 1 [0, 10) at offset 10
	// split 2 from old 2 [0, 5) at offset 20
}
