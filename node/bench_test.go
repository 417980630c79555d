package node_test

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shufflenode/shufflenode/dht"
	"github.com/shufflenode/shufflenode/internal/testkit"
	"github.com/shufflenode/shufflenode/node"
	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/table"
)

// BenchmarkShardThroughput measures the data path between two real nodes
// (splitter -> libp2p TLS stream -> receiver): input tasks of ~1 MiB put on
// one node, every row owned by the other, four puts at a time; a put returns
// once the receiver acknowledged its data and end marker. In the same run it
// measures one raw libp2p TLS stream between two hosts (dht.StreamCeiling)
// moving the same bytes, and reports both and their ratio.
func BenchmarkShardThroughput(b *testing.B) {
	ctx := context.Background()
	quiet := testkit.Quiet()
	nodes, err := node.StartLocal(ctx, 2, node.Config{
		Cluster: dht.Config{DataDir: b.TempDir(), Profile: "local", Logger: quiet},
		Service: service.Config{Logger: quiet}, Logger: quiet,
	})
	if err != nil {
		b.Fatal(err)
	}
	defer node.CloseAll(nodes)
	gen := table.GenConfig{Rows: 8 * 8192, PayloadBytes: 100} // 8192 rows of 128 B: 1 MiB a task
	id := shuffleOwnedBy(b, nodes[0].Service, nodes[1].Name(), b.N)
	size := int64(8192) * table.GenRowBytes(gen)
	recs := make([]arrow.Record, 8) // made before the clock starts, put in turn
	for i := range recs {
		recs[i] = table.GenTask(memory.DefaultAllocator, gen, i, len(recs))
		defer recs[i].Release()
	}
	b.SetBytes(size)
	b.ResetTimer()
	putAll(b, nodes[0].Service, id, recs)
	b.StopTimer()
	ours := float64(size) * float64(b.N) / b.Elapsed().Seconds() / 1e6
	took, err := dht.StreamCeiling(ctx, size*int64(b.N))
	if err != nil {
		b.Fatal(err)
	}
	raw := float64(size) * float64(b.N) / took.Seconds() / 1e6
	b.ReportMetric(raw, "stream-MB/s")
	b.ReportMetric(ours/raw, "ratio")
}

// shuffleOwnedBy creates, on s, a one-partition hash shuffle of tasks tasks
// whose partition the node named owner holds (trying ownership seeds).
func shuffleOwnedBy(b *testing.B, s *service.Service, owner string, tasks int) string {
	codec, err := table.NewCodec(table.GenSchema(), nil)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; ; i++ {
		id := fmt.Sprintf("bench-%d-%d", tasks, i)
		sp := &spec.Spec{ID: id, Kind: spec.Dataframe, Tasks: tasks, Partitions: 1, Schema: codec.SchemaBytes(),
			Rule: table.Rule{Kind: table.Hash, Columns: []string{"key"}}, OwnershipSeed: fmt.Sprint("seed-", i)}
		if err := s.Create(context.Background(), sp); err != nil {
			b.Fatal(err)
		}
		locs, err := s.Locations(id)
		if err != nil {
			b.Fatal(err)
		}
		if locs[0].Node == owner {
			return id
		}
	}
}

// putAll puts b.N tasks on s, four at a time, task t with the rows of
// recs[t%len(recs)].
func putAll(b *testing.B, s *service.Service, id string, recs []arrow.Record) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range 4 {
		wg.Go(func() {
			for t := range next {
				rec := recs[t%len(recs)]
				fed := false
				_, err := s.Put(context.Background(), id, uint64(t), 0, rec.Schema(), func() (arrow.Record, error) {
					if fed {
						return nil, io.EOF
					}
					fed = true
					return rec, nil
				})
				if err != nil {
					b.Error(err)
				}
			}
		})
	}
	for t := range b.N {
		next <- t
	}
	close(next)
	wg.Wait()
}
