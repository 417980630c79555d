package barrier_test

import (
	"fmt"

	"github.com/shufflenode/shufflenode/barrier"
)

func Example() {
	tr, err := barrier.New(barrier.Config{Shuffle: "s1", Tasks: 1, Receivers: []string{"a", "b"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	var toA barrier.Totals
	toA.Add(100, 4096, 0xdeadbeef) // one piece of 100 rows sent to a; b got only the marker

	d, _ := tr.Committed("b", 0, 0, barrier.Totals{}) // commits may come first
	fmt.Println(d.Seal, tr.Phase())
	d, _ = tr.TaskDone(0, 0, "a", map[string]barrier.Totals{"a": toA})
	fmt.Println(d.Seal, tr.Phase())
	d, _ = tr.Committed("a", 0, 0, toA)
	fmt.Println(d.Seal, tr.Phase())
	// Output:
	// false running
	// false running
	// true sealed
}
