package integration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/client"
	"github.com/shufflenode/shufflenode/dht"
	"github.com/shufflenode/shufflenode/node"
	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/table"
	"google.golang.org/grpc/codes"
)

// kvSchema is the table of the co-partitioning and op tests: a nullable
// int64 key and a unique int64 val per row.
var kvSchema = arrow.NewSchema([]arrow.Field{
	{Name: "key", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "val", Type: arrow.PrimitiveTypes.Int64},
}, nil)

// kvTable describes one side's rows: task t holds rows, row i of the side
// (over all tasks) has key i % keys, or null when i % nullEvery == 0, and
// val base + i.
type kvTable struct {
	tasks, rows      int
	keys, nullEvery  int
	base             int64
	partitions, repl int
}

// record builds input task t.
func (k kvTable) record(t int) arrow.Record {
	b := array.NewRecordBuilder(memory.DefaultAllocator, kvSchema)
	defer b.Release()
	keys, vals := b.Field(0).(*array.Int64Builder), b.Field(1).(*array.Int64Builder)
	for i := t * k.rows; i < (t+1)*k.rows; i++ {
		if k.nullEvery > 0 && i%k.nullEvery == 0 {
			keys.AppendNull()
		} else {
			keys.Append(int64(i % k.keys))
		}
		vals.Append(k.base + int64(i))
	}
	return b.NewRecord()
}

// spec is the side's hash shuffle spec.
func (k kvTable) spec(t *testing.T, id, coPartition string) *spec.Spec {
	t.Helper()
	codec, err := table.NewCodec(kvSchema, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &spec.Spec{ID: id, Kind: spec.Dataframe, Tasks: k.tasks, Partitions: k.partitions, Schema: codec.SchemaBytes(),
		Rule: table.Rule{Kind: table.Hash, Columns: []string{"key"}}, Replication: k.repl, CoPartition: coPartition}
}

// run shuffles the side on the nodes at addrs.
func (k kvTable) run(t *testing.T, ctx context.Context, sp *spec.Spec, addrs []string) *client.Result {
	t.Helper()
	res, err := client.Run(ctx, client.Job{Spec: sp, Nodes: addrs,
		Input: func(task int) ([]arrow.Record, error) { return []arrow.Record{k.record(task)}, nil }})
	if err != nil {
		t.Fatalf("shuffle %s: %v", sp.ID, err)
	}
	t.Cleanup(func() { res.Close(context.Background()) })
	return res
}

// owners lists the API address of every partition's owner as the node at
// addr sees it.
func owners(t *testing.T, ctx context.Context, addr, id string) []string {
	t.Helper()
	c, err := client.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	eps, err := c.Locations(ctx, id)
	if err != nil {
		t.Fatalf("locations of %s on %s: %v", id, addr, err)
	}
	out := make([]string, len(eps))
	for i, e := range eps {
		out[i] = e.Addr
	}
	return out
}

// create creates sp (no data) on the node at addr.
func create(ctx context.Context, addr string, sp *spec.Spec) error {
	c, err := client.Dial(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Create(ctx, sp)
}

// sameOwners fails the test unless a and b are owned alike, partition for
// partition, as every node in addrs sees them.
func sameOwners(t *testing.T, ctx context.Context, addrs []string, a, b string) {
	t.Helper()
	for _, addr := range addrs {
		oa, ob := owners(t, ctx, addr, a), owners(t, ctx, addr, b)
		if !slices.Equal(oa, ob) {
			t.Fatalf("node %s: owners of %s %v differ from those of %s %v", addr, a, oa, b, ob)
		}
	}
}

// leave makes nodes[i] leave the cluster gracefully and stop, then waits
// until no other node of nodes places anything of shuffle id on it.
func leave(t *testing.T, ctx context.Context, nodes []*node.Node, i int, id string) {
	t.Helper()
	gone := nodes[i].APIAddr()
	if err := nodes[i].Cluster.Leave(time.Second); err != nil {
		t.Fatal(err)
	}
	nodes[i].Close()
	rest := apiAddrs(slices.Delete(slices.Clone(nodes), i, i+1))
	waitMoved(t, ctx, rest, gone, id)
}

// waitFor polls cond every 20 ms until it holds or ctx ends.
func waitFor(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// countRows reads every partition of res and returns the rows.
func countRows(t *testing.T, ctx context.Context, res *client.Result, partitions int) int64 {
	t.Helper()
	var n int64
	for p := range partitions {
		err := res.Read(ctx, p, func(rec arrow.Record) error { n += rec.NumRows(); return nil })
		if err != nil {
			t.Fatalf("read %s partition %d: %v", res.Shuffle, p, err)
		}
	}
	return n
}

// TestCoPartitionAfterLeave: a node leaves between the creates of A and B
// (B co-partitioned with A), then another one after: B starts in A's epoch,
// runs its data to the seal there, and both keep the same owners; a shuffle
// with A's seed but without co_partition does not (the test can fail).
func TestCoPartitionAfterLeave(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	nodes := startCluster(t, 5, 64<<20)
	side := kvTable{tasks: 6, rows: 500, keys: 300, partitions: 64}
	a := side.spec(t, "cp-a", "")
	if err := create(ctx, nodes[0].APIAddr(), a); err != nil {
		t.Fatal(err)
	}
	leave(t, ctx, nodes, 4, a.ID)
	live := apiAddrs(nodes[:4])
	res := side.run(t, ctx, side.spec(t, "cp-b", a.ID), live)
	if res.Epoch != 1 {
		t.Errorf("co-partitioned shuffle sealed in epoch %d, want 1 (A's epoch when it was created)", res.Epoch)
	}
	if n := countRows(t, ctx, res, side.partitions); n != int64(side.tasks*side.rows) {
		t.Errorf("read %d rows back, want %d", n, side.tasks*side.rows)
	}
	sameOwners(t, ctx, live, a.ID, "cp-b")
	control := side.spec(t, "cp-control", "")
	control.OwnershipSeed = a.ID
	if err := create(ctx, nodes[0].APIAddr(), control); err != nil {
		t.Fatal(err)
	}
	if slices.Equal(owners(t, ctx, live[0], a.ID), owners(t, ctx, live[0], control.ID)) {
		t.Fatalf("a shuffle of A's seed over the current members is owned like A: the test cannot tell co-partitioning apart")
	}
	if err := create(ctx, nodes[0].APIAddr(), side.spec(t, "cp-e", a.ID)); err != nil {
		t.Fatal(err)
	}
	leave(t, ctx, nodes[:4], 3, a.ID) // node-4 is gone already
	rest := apiAddrs(nodes[:3])
	waitMoved(t, ctx, rest, nodes[3].APIAddr(), "cp-e")
	sameOwners(t, ctx, rest, a.ID, "cp-e")
}

// waitMoved waits until every node in addrs places no partition of the
// shuffles ids on gone, nor on "": an owner whose address the node no longer
// knows, which is gone itself once it left the member list but before that
// node moved its partitions. Each node learns of the leave by its own
// gossip, so one node having moved says nothing of the others.
func waitMoved(t *testing.T, ctx context.Context, addrs []string, gone string, ids ...string) {
	t.Helper()
	waitFor(t, ctx, fmt.Sprintf("%v to move off %s on every node", ids, gone), func() bool {
		for _, addr := range addrs {
			for _, id := range ids {
				o := owners(t, ctx, addr, id)
				if slices.Contains(o, gone) || slices.Contains(o, "") {
					return false
				}
			}
		}
		return true
	})
}

// TestCoPartitionAfterJoin: a node joins between the creates; the
// co-partitioned shuffle pins A's members (the newcomer owns nothing of it)
// while a plain shuffle of A's seed gives the newcomer a share.
func TestCoPartitionAfterJoin(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	nodes := startCluster(t, 3, 64<<20)
	side := kvTable{tasks: 4, rows: 400, keys: 200, nullEvery: 37, partitions: 32, repl: 2}
	a := side.run(t, ctx, side.spec(t, "cj-a", ""), apiAddrs(nodes))
	newcomer := joinNode(t, ctx, nodes, "late")
	b := side.run(t, ctx, side.spec(t, "cj-b", a.Shuffle), apiAddrs(nodes))
	sameOwners(t, ctx, apiAddrs(nodes), a.Shuffle, b.Shuffle) // the newcomer holds neither
	if slices.Contains(owners(t, ctx, nodes[0].APIAddr(), b.Shuffle), newcomer.APIAddr()) {
		t.Errorf("the node that joined after A owns partitions of B")
	}
	control := side.spec(t, "cj-control", "")
	control.OwnershipSeed = a.Shuffle
	if err := create(ctx, nodes[0].APIAddr(), control); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(owners(t, ctx, nodes[0].APIAddr(), control.ID), newcomer.APIAddr()) {
		t.Fatalf("a plain shuffle created after the join gives the newcomer nothing: the test cannot tell co-partitioning apart")
	}
	if n := countRows(t, ctx, b, side.partitions); n != int64(side.tasks*side.rows) {
		t.Errorf("read %d rows back, want %d", n, side.tasks*side.rows)
	}
}

// joinNode starts one more node that joins the cluster of nodes, and waits
// until every node (and it) lists it.
func joinNode(t *testing.T, ctx context.Context, nodes []*node.Node, name string) *node.Node {
	t.Helper()
	log := testLogger()
	n, err := node.Start(ctx, node.Config{
		Cluster: dht.Config{Name: name, DataDir: t.TempDir(), Profile: "local", Logger: log,
			Join: []string{nodes[0].Cluster.Self().GossipAddr}},
		Service: service.Config{MemoryLimit: 64 << 20, Logger: log}, Logger: log,
	})
	if err != nil {
		t.Fatalf("starting node %s: %v", name, err)
	}
	t.Cleanup(func() { n.Close() })
	waitFor(t, ctx, name+" to be a member everywhere", func() bool {
		for _, m := range append(slices.Clone(nodes), n) {
			if len(m.Service.Members()) != len(nodes)+1 {
				return false
			}
		}
		return true
	})
	return n
}

// TestCoPartitionBadSpecs: what cannot share another shuffle's ownership is
// refused with InvalidArgument naming both shuffles.
func TestCoPartitionBadSpecs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	nodes := startCluster(t, 3, 64<<20)
	side := kvTable{tasks: 2, rows: 10, keys: 5, partitions: 16}
	if err := create(ctx, nodes[0].APIAddr(), side.spec(t, "bad-a", "")); err != nil {
		t.Fatal(err)
	}
	newcomer := joinNode(t, ctx, nodes, "late")
	for _, tc := range []struct {
		name    string
		on      string // API address of the creating node
		edit    func(*spec.Spec)
		mention string
	}{
		{"unknown shuffle", nodes[0].APIAddr(), func(s *spec.Spec) { s.CoPartition = "nope" }, "no such shuffle"},
		{"other partition count", nodes[0].APIAddr(), func(s *spec.Spec) { s.Partitions = 15 }, "15 partitions, but bad-a has 16"},
		{"other replication", nodes[1].APIAddr(), func(s *spec.Spec) { s.Replication = 2 }, "replication 2"},
		{"other seed", nodes[0].APIAddr(), func(s *spec.Spec) { s.OwnershipSeed = "x" }, `ownership_seed "x"`},
		{"creating node does not hold it", newcomer.APIAddr(), func(s *spec.Spec) {}, "no such shuffle on node late"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := side.spec(t, "bad-b", "bad-a")
			tc.edit(sp)
			err := create(ctx, tc.on, sp)
			wantCode(t, tc.name, err, codes.InvalidArgument)
			if msg := err.Error(); !strings.Contains(msg, "bad-b") || !strings.Contains(msg, sp.CoPartition) || !strings.Contains(msg, tc.mention) {
				t.Errorf("error %q should name bad-b, %s and say %q", msg, sp.CoPartition, tc.mention)
			}
		})
	}
}
