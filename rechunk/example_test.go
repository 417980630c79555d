package rechunk_test

import (
	"fmt"

	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/splitaxes"
)

// Rechunk a (2, 4) |u1 array from two (2, 2) chunks to two (1, 4) chunks.
func Example() {
	plan, err := splitaxes.New([][]int64{{2}, {2, 2}}, [][]int64{{1, 1}, {4}})
	if err != nil {
		fmt.Println(err)
		return
	}
	dt, _ := rechunk.ParseDType("|u1")
	olds := []rechunk.Chunk{
		{DType: dt, Shape: []int64{2, 2}, Data: []byte{0, 1, 4, 5}},
		{DType: dt, Shape: []int64{2, 2}, Data: []byte{2, 3, 6, 7}},
	}
	asm := make([]*rechunk.Assembler, 2)
	for j := range asm {
		asm[j], _ = rechunk.NewAssembler(plan, []int{j, 0}, dt, rechunk.DefaultConfig())
	}
	for i, old := range olds {
		splits, _ := plan.NDSplits([]int{0, i})
		for s := range splits {
			piece, _ := rechunk.Cut(old, s.Slices)
			if err := asm[s.NewChunk[0]].Place(s.SplitIndex, piece); err != nil {
				fmt.Println(err)
			}
		}
	}
	for _, a := range asm {
		c, err := a.Chunk()
		fmt.Println(c.Shape, c.Data, err)
	}
	// Output:
	// [1 4] [0 1 2 3] <nil>
	// [1 4] [4 5 6 7] <nil>
}
