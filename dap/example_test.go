package dap_test

import (
	"encoding/json"
	"fmt"

	"github.com/shufflenode/shufflenode/dap"
)

// A block-cyclic target over a 2x2 process grid: the dim_data output
// partition 1 is delivered with.
func ExampleTarget() {
	t := dap.Target{ProcGrid: []int{2, 2}, Axes: []dap.TargetAxis{{DistType: "c", BlockSize: 2}, {DistType: "b", Padding: 1}}}
	d, err := t.Distribution([]int64{10, 6})
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := json.Marshal(d.DimData(1))
	fmt.Println(d.Chunks)
	fmt.Println(string(b))
	// Output:
	// [[6 4] [4 4]]
	// {"__version__":"0.10.0","dim_data":[{"dist_type":"c","size":10,"proc_grid_size":2,"proc_grid_rank":0,"start":0,"block_size":2},{"dist_type":"b","size":6,"proc_grid_size":2,"proc_grid_rank":1,"start":2,"stop":6,"padding":[1,0]}]}
}
