package table_test

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/table"
)

// Example shows the sender's path for one input batch: partition the rows,
// split them into one group per destination node, encode each group as one
// IPC message; and the receiver's: decode and slice out each partition.
func Example() {
	mem := memory.DefaultAllocator
	rec := table.GenTask(mem, table.GenConfig{Rows: 1000, Seed: 1, KeyCardinality: 50, PayloadBytes: 8}, 0, 1)
	defer rec.Release()

	part, err := table.NewPartitioner(rec.Schema(), table.Rule{Kind: table.Hash, Columns: []string{"key"}}, 8)
	if err != nil {
		fmt.Println(err)
		return
	}
	pids, _ := part.Partition(rec, nil)
	owner := []int{0, 1, 0, 1, 0, 1, 0, 1} // partition -> node
	groups, _ := table.Split(mem, rec, pids, owner, 2)

	codec, _ := table.NewCodec(rec.Schema(), mem)
	var rows int64
	for _, g := range groups {
		msg, _ := codec.AppendRecord(nil, g.Rec) // sent once per destination
		got, _ := codec.Decode(msg)              // on the receiver
		for _, r := range g.Runs {
			shard := table.Slice(got, r.Offset, r.Rows) // rows of partition r.Partition
			rows += shard.NumRows()
			shard.Release()
		}
		got.Release()
		g.Rec.Release()
	}
	fmt.Println(rows, "rows in", len(groups), "groups")
	// Output: 1000 rows in 2 groups
}
