package dedup_test

import (
	"fmt"

	"github.com/shufflenode/shufflenode/dedup"
)

func ExampleLedger() {
	l := dedup.NewLedger(10, 8) // 10 input tasks, 8 output partitions
	mine := dedup.BitsetOf(1, 3, 5)

	// Attempt 0 of task 4 commits first and owns all of this receiver's partitions.
	owned, _ := l.Commit(4, 0, mine)
	fmt.Println(owned.Count(), l.Visible(4, 0, 3))

	// A replay (attempt 1) that only needs to cover partition 7, which moved here.
	owned, _ = l.Commit(4, 1, dedup.BitsetOf(1, 3, 5, 7))
	owned.ForEach(func(p int) bool { fmt.Println("attempt 1 owns", p); return true })
	fmt.Println(l.Visible(4, 1, 3))
	// Output:
	// 3 true
	// attempt 1 owns 7
	// false
}
