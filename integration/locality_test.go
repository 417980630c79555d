package integration

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/shufflenode/shufflenode/api"
	"github.com/shufflenode/shufflenode/client"
	"github.com/shufflenode/shufflenode/node"
	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/spec"
)

// crossBytes is the request bytes the nodes sent to other nodes so far.
func crossBytes(nodes []*node.Node) uint64 {
	var n uint64
	for _, nd := range nodes {
		for peer, ps := range nd.Cluster.Stats().Peers {
			if peer != nd.Name() {
				n += ps.BytesSent
			}
		}
	}
	return n
}

// TestArrayLocality rechunks a (400, 400) float64 array from (100, 100)
// chunks to (50, 200) chunks on 4 nodes, each old chunk put from the node
// that "holds" it (old chunks (i, 2k) and (i, 2k+1) on one node), once with
// owners dealt by hash and once with old_locations: every element is
// checked, each node owns at most ceil(P/N)+1 new chunks, and the bytes that
// cross the network drop.
func TestArrayLocality(t *testing.T) {
	nodes := startCluster(t, 4, 64<<20)
	addrs := apiAddrs(nodes)
	old, new := spec.Chunks{{100, 100, 100, 100}, {100, 100, 100, 100}}, spec.Chunks{{50, 50, 50, 50, 50, 50, 50, 50}, {200, 200}}
	putOn := func(task int) int { i, j := task/4, task%4; return (2*i + j/2) % 4 }
	var sent [2]uint64
	for k, local := range []bool{false, true} {
		sp := spec.ArraySpec([]string{"loc-hash", "loc-affinity"}[k], "<f8", old, new)
		if local {
			sp.OldLocations = make([]string, sp.Tasks)
			for task := range sp.Tasks {
				sp.OldLocations[task] = nodes[putOn(task)].Name()
			}
		}
		before := crossBytes(nodes)
		checkLocalityRun(t, addrs, sp, putOn)
		sent[k] = crossBytes(nodes) - before
	}
	t.Logf("array bytes %d; bytes across the network: hash placement %d, locality %d", 400*400*8, sent[0], sent[1])
	if sent[1]*2 > sent[0] {
		t.Fatalf("locality sent %d bytes across, hash %d: want under half", sent[1], sent[0])
	}
}

// TestArrayLocalityNodeLoss loses a node after the seal of a locality-placed
// rechunk: reads recover, every element is right, and only the tasks whose
// pieces the lost node held (the 4 old chunks put from it) are replayed.
func TestArrayLocalityNodeLoss(t *testing.T) {
	nodes := startCluster(t, 4, 64<<20)
	old, new := spec.Chunks{{100, 100, 100, 100}, {100, 100, 100, 100}}, spec.Chunks{{50, 50, 50, 50, 50, 50, 50, 50}, {200, 200}}
	putOn := func(task int) int { i, j := task/4, task%4; return (2*i + j/2) % 4 }
	sp := spec.ArraySpec("loc-loss", "<f8", old, new)
	sp.OldLocations = make([]string, sp.Tasks)
	for task := range sp.Tasks {
		sp.OldLocations[task] = nodes[putOn(task)].Name()
	}
	res := checkLocalityRun(t, apiAddrs(nodes), sp, putOn, func() { nodes[2].Close() })
	if res.Epoch != 1 || res.ReplaySet > 4 {
		t.Fatalf("epoch %d, replay set %d: want 1 and at most the 4 tasks put from the lost node", res.Epoch, res.ReplaySet)
	}
	t.Logf("lost node-2 after the seal: replay set %d, re-runs %d", res.ReplaySet, res.Replayed())
}

func checkLocalityRun(t *testing.T, addrs []string, sp *spec.Spec, putOn func(int) int, beforeRead ...func()) *client.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dt, _ := rechunk.ParseDType("<f8")
	res, err := client.Run(ctx, client.Job{Spec: sp, Nodes: addrs, PutOn: putOn,
		Input: func(task int) ([]arrow.Record, error) {
			return []arrow.Record{api.ChunkRecord(gridChunk(dt, task/4*100, task%4*100, 100, 100))}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close(context.WithoutCancel(ctx))
	owned := map[string]int{}
	for _, ep := range res.Endpoints {
		owned[ep.Addr]++
	}
	for n, c := range owned {
		if c > 16/4+1 {
			t.Fatalf("%s owns %d new chunks", n, c)
		}
	}
	for _, f := range beforeRead {
		f()
	}
	for p := range sp.Partitions {
		got, err := res.ReadChunk(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if want := gridChunk(dt, p/2*50, p%2*200, 50, 200); string(got.Data) != string(want.Data) {
			t.Fatalf("new chunk %d differs", p)
		}
	}
	return res
}

// gridChunk is the (rows, cols) box at (r0, c0) of a 400-column array whose
// element (i, j) holds i*400+j as a little-endian uint64.
func gridChunk(dt rechunk.DType, r0, c0, rows, cols int) rechunk.Chunk {
	c, _ := rechunk.NewChunk(dt, []int64{int64(rows), int64(cols)})
	for i := range rows {
		for j := range cols {
			binary.LittleEndian.PutUint64(c.Data[8*(i*cols+j):], uint64((r0+i)*400+c0+j))
		}
	}
	return c
}
