package splitter

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shufflenode/shufflenode/shard"
	"github.com/shufflenode/shufflenode/table"
)

// endSender records the end markers it is sent, by destination.
type endSender struct {
	mu   sync.Mutex
	ends map[string][]shard.End
}

func (s *endSender) Send(_ context.Context, b *Batch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range b.Ends {
		s.ends[b.Dest] = append(s.ends[b.Dest], e.End)
	}
	return nil
}

// TestCutSendsRowSumsOfHeldPartitions: with Route.Holders, each destination's
// end marker carries the row sums of the partitions it holds, also of those
// whose rows a replay did not send it, and they are the sums of the rows
// that went to each partition.
func TestCutSendsRowSumsOfHeldPartitions(t *testing.T) {
	const parts = 8
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}}, nil)
	part, err := table.NewPartitioner(schema, table.Rule{Kind: table.Hash, Columns: []string{"k"}}, parts)
	if err != nil {
		t.Fatal(err)
	}
	codec, err := table.NewCodec(schema, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	rec := int64Record(schema, 1000)
	defer rec.Release()
	rs := &endSender{ends: map[string][]shard.End{}}
	s, _ := New(Config{}, rs)
	defer s.Close()
	dests := []string{"a", "b"}
	owner := func(p int) int { return p % 2 }
	primary := []int{0, 2, 0, 2, 0, 2, 0, 2} // a replay: b's partitions stayed with it, nothing is sent there
	holders := &Holders{Owner: []int{0, 1, 0, 1, 0, 1, 0, 1}, Backup: []int{-1, -1, -1, -1, -1, -1, -1, -1}}
	c := s.NewCut(Route{Shuffle: "s", Task: 3, Dests: dests, Primary: primary, Holders: holders})
	ctx := context.Background()
	if err := c.Record(ctx, Frame{Partitioner: part, Codec: codec}, rec); err != nil {
		t.Fatal(err)
	}
	if err := c.End(ctx, dests); err != nil {
		t.Fatal(err)
	}
	var want table.RowSums
	pids, _ := part.Partition(rec, nil)
	if err := want.Add(rec, pids); err != nil {
		t.Fatal(err)
	}
	for d, name := range dests {
		ends := rs.ends[name]
		if len(ends) != 1 {
			t.Fatalf("%s got %d end markers", name, len(ends))
		}
		var got []int
		for _, ps := range ends[0].Sums {
			rows, sum := want.Of(int(ps.Partition))
			if owner(int(ps.Partition)) != d || ps.Rows != rows || ps.Sum != sum {
				t.Errorf("%s: sum %+v, want partition held by it with %d rows, sum %x", name, ps, rows, sum)
			}
			got = append(got, int(ps.Partition))
		}
		if len(got) != parts/2 {
			t.Errorf("%s got sums of partitions %v, want the %d it holds", name, got, parts/2)
		}
	}
}

func int64Record(schema *arrow.Schema, n int) arrow.Record {
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := range n {
		b.Field(0).(*array.Int64Builder).Append(int64(i * 7))
	}
	return b.NewRecord()
}

// TestCutSendsRowSumsToBackups: with replication, a destination gets the
// sums of the partitions it owns and of those it backs up, each once.
func TestCutSendsRowSumsToBackups(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}}, nil)
	part, _ := table.NewPartitioner(schema, table.Rule{Kind: table.Hash, Columns: []string{"k"}}, 4)
	codec, _ := table.NewCodec(schema, memory.DefaultAllocator)
	rec := int64Record(schema, 1000)
	defer rec.Release()
	rs := &endSender{ends: map[string][]shard.End{}}
	s, _ := New(Config{}, rs)
	defer s.Close()
	dests := []string{"a", "b", "c"}
	holders := &Holders{Owner: []int{0, 1, 2, 0}, Backup: []int{1, 2, -1, 0}} // partition 3's backup is its owner: once
	c := s.NewCut(Route{Shuffle: "s", Task: 1, Dests: dests, Primary: holders.Owner, Backups: []int{1, 2, 3, 3}, Holders: holders})
	ctx := context.Background()
	if err := c.Record(ctx, Frame{Partitioner: part, Codec: codec}, rec); err != nil {
		t.Fatal(err)
	}
	if err := c.End(ctx, dests); err != nil {
		t.Fatal(err)
	}
	want := map[string][]uint32{"a": {0, 3}, "b": {0, 1}, "c": {1, 2}}
	for _, name := range dests {
		var got []uint32
		for _, ps := range rs.ends[name][0].Sums {
			got = append(got, ps.Partition)
		}
		if !slices.Equal(got, want[name]) {
			t.Errorf("%s got the sums of partitions %v, want %v", name, got, want[name])
		}
	}
}
