package dfops_test

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/dfops"
)

func ExampleHashJoin() {
	mem := memory.DefaultAllocator
	left, _, _ := array.RecordFromJSON(mem, arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "v", Type: arrow.BinaryTypes.String}}, nil),
		strings.NewReader(`[{"k": 1, "v": "a"}, {"k": null, "v": "b"}, {"k": 2, "v": "c"}]`))
	defer left.Release()
	right, _, _ := array.RecordFromJSON(mem, arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "v", Type: arrow.PrimitiveTypes.Float64}}, nil),
		strings.NewReader(`[{"k": 2, "v": 0.5}, {"k": 3, "v": 1.5}, {"k": 2, "v": 2.5}, {"k": null, "v": 9}]`))
	defer right.Release()
	j := dfops.DefaultJoinSpec("k")
	j.How = dfops.Outer
	out, err := dfops.HashJoin(mem, left, right, j)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer out.Release()
	for i, col := range out.Columns() {
		fmt.Println(out.ColumnName(i), out.Schema().Field(i).Type, col)
	}
	// Output:
	// k int64 [1 (null) 2 2 3 (null)]
	// v_x utf8 ["a" "b" "c" "c" (null) (null)]
	// v_y float64 [(null) (null) 0.5 2.5 1.5 9]
}

func ExampleSortStable() {
	mem := memory.DefaultAllocator
	rec, _, _ := array.RecordFromJSON(mem, arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil),
		strings.NewReader(`[{"k": 2, "id": 0}, {"k": null, "id": 1}, {"k": 1, "id": 2}, {"k": 2, "id": 3}]`))
	defer rec.Release()
	out, _ := dfops.SortStable(mem, rec, "k")
	defer out.Release()
	fmt.Println(out.Column(0), out.Column(1))
	// Output: [1 2 2 (null)] [2 0 3 1]
}

func ExampleQuantiles() {
	sample := []int{5, 1, 9, 3, 7, 7, 7, 7, 2, 8}
	fmt.Println(dfops.Quantiles(sample, nil, 4))
	// Output: [3 7 7]
}
