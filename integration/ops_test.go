package integration

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/shufflenode/shufflenode/api"
	"github.com/shufflenode/shufflenode/client"
	"github.com/shufflenode/shufflenode/dfops"
	"github.com/shufflenode/shufflenode/node"
	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/spec"
	"google.golang.org/grpc/codes"
)

// kv is one row of kvSchema; key nil is null.
type kv struct {
	key *int64
	val int64
}

// allRows returns every row of the side, in input order.
func (k kvTable) allRows() []kv {
	var out []kv
	for t := range k.tasks {
		rec := k.record(t)
		out = append(out, kvRows(rec)...)
		rec.Release()
	}
	return out
}

// kvRows reads the rows of a kvSchema record.
func kvRows(rec arrow.Record) []kv {
	keys, vals := rec.Column(0).(*array.Int64), rec.Column(1).(*array.Int64)
	out := make([]kv, rec.NumRows())
	for i := range out {
		out[i].val = vals.Value(i)
		if keys.IsValid(i) {
			k := keys.Value(i)
			out[i].key = &k
		}
	}
	return out
}

// cell formats a nullable value.
func cell(v *int64) string {
	if v == nil {
		return "null"
	}
	return fmt.Sprint(*v)
}

// refJoin is the join on key by nested loops, as sorted "key|val_x|val_y"
// rows: null keys match nothing; left and outer keep unmatched left rows,
// right and outer unmatched right rows.
func refJoin(l, r []kv, how string) []string {
	var out []string
	matched := make([]bool, len(r))
	for _, a := range l {
		n := 0
		for j, b := range r {
			if a.key != nil && b.key != nil && *a.key == *b.key {
				out = append(out, cell(a.key)+"|"+cell(&a.val)+"|"+cell(&b.val))
				matched[j], n = true, n+1
			}
		}
		if n == 0 && (how == "left" || how == "outer") {
			out = append(out, cell(a.key)+"|"+cell(&a.val)+"|null")
		}
	}
	for j, b := range r {
		if !matched[j] && (how == "right" || how == "outer") {
			out = append(out, cell(b.key)+"|null|"+cell(&b.val))
		}
	}
	slices.Sort(out)
	return out
}

// joinRows formats the rows of a join output (key, val_x, val_y).
func joinRows(rec arrow.Record) []string {
	cols := [3]*array.Int64{rec.Column(0).(*array.Int64), rec.Column(1).(*array.Int64), rec.Column(2).(*array.Int64)}
	out := make([]string, rec.NumRows())
	for i := range out {
		var cells [3]string
		for c, col := range cols {
			cells[c] = "null"
			if col.IsValid(i) {
				cells[c] = fmt.Sprint(col.Value(i))
			}
		}
		out[i] = strings.Join(cells[:], "|")
	}
	return out
}

// opsFixture is two co-partitioned shuffles, sealed, on a real cluster.
type opsFixture struct {
	nodes       []*node.Node
	left, right kvTable
	res         [2]*client.Result
	c           *client.Client
	names       map[string]string // API address -> node name
}

func newOpsFixture(t *testing.T, ctx context.Context) *opsFixture {
	// Batches of 16 rows: a join's lead side reaches it in many records.
	return newOpsFixtureWith(t, ctx, service.Config{MemoryLimit: 64 << 20, OutputBatchRows: 16})
}

func newOpsFixtureWith(t *testing.T, ctx context.Context, cfg service.Config) *opsFixture {
	f := &opsFixture{nodes: startClusterWith(t, 3, cfg),
		left:  kvTable{tasks: 4, rows: 300, keys: 150, nullEvery: 41, partitions: 8},
		right: kvTable{tasks: 3, rows: 100, keys: 120, nullEvery: 29, base: 1_000_000, partitions: 8},
		names: map[string]string{}}
	addrs := apiAddrs(f.nodes)
	f.res[0] = f.left.run(t, ctx, f.left.spec(t, "ops-l", ""), addrs)
	f.res[1] = f.right.run(t, ctx, f.right.spec(t, "ops-r", "ops-l"), addrs)
	var err error
	if f.c, err = client.Dial(addrs[0]); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.c.Close() })
	for _, n := range f.nodes {
		f.names[n.APIAddr()] = n.Name()
	}
	return f
}

// notOwner is the API address of a node that does not own partition p.
func (f *opsFixture) notOwner(p int) string {
	for _, n := range f.nodes {
		if n.APIAddr() != f.res[0].Endpoints[p].Addr {
			return n.APIAddr()
		}
	}
	return ""
}

// TestJoinOp joins every partition pair on its owner (no input crosses the
// network) and on a node that owns neither (it fetches both), for the four
// hows, and compares the union with a nested-loop join of all rows.
func TestJoinOp(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	f := newOpsFixture(t, ctx)
	l, r := f.left.allRows(), f.right.allRows()
	for _, how := range []string{"inner", "left", "right", "outer"} {
		j := dfops.JoinSpec{LeftOn: []string{"key"}, RightOn: []string{"key"}, How: dfops.How(how)}
		t.Run(how+"/on the owner", func(t *testing.T) {
			f.checkJoin(t, ctx, j, refJoin(l, r, how), func(p int) (string, int) { return f.res[0].Endpoints[p].Addr, 0 })
		})
		t.Run(how+"/elsewhere", func(t *testing.T) {
			f.checkJoin(t, ctx, j, refJoin(l, r, how), func(p int) (string, int) { return f.notOwner(p), 2 })
		})
	}
	t.Run("result level", func(t *testing.T) {
		var got []string
		for p := range f.left.partitions {
			st, err := f.res[0].Join(ctx, f.res[1], p, dfops.DefaultJoinSpec("key"), func(rec arrow.Record) error {
				got = append(got, joinRows(rec)...)
				return nil
			})
			if err != nil || st.Remote != 0 {
				t.Fatalf("partition %d: %+v, %v", p, st, err)
			}
		}
		slices.Sort(got)
		if want := refJoin(l, r, "inner"); !slices.Equal(got, want) {
			t.Errorf("%d rows, want %d", len(got), len(want))
		}
	})
}

// checkJoin runs the join of every partition on the node at(p) names, which
// must read remote inputs from other nodes, and compares with want.
func (f *opsFixture) checkJoin(t *testing.T, ctx context.Context, j dfops.JoinSpec, want []string, at func(int) (string, int)) {
	t.Helper()
	var got []string
	var in [2]int64
	for p := range f.left.partitions {
		addr, remote := at(p)
		st, err := f.c.Join(ctx, addr, "ops-l", "ops-r", p, j, func(rec arrow.Record) error {
			got = append(got, joinRows(rec)...)
			return nil
		})
		if err != nil {
			t.Fatalf("partition %d on %s: %v", p, addr, err)
		}
		if st.Node != f.names[addr] || st.Remote != remote || len(st.InputRows) != 2 {
			t.Fatalf("partition %d on %s: stats %+v, want node %s with %d remote inputs", p, addr, st, f.names[addr], remote)
		}
		in[0], in[1] = in[0]+st.InputRows[0], in[1]+st.InputRows[1]
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("%d rows, want %d; first rows %v, want %v", len(got), len(want), got[:min(5, len(got))], want[:min(5, len(want))])
	}
	if in != [2]int64{int64(f.left.tasks * f.left.rows), int64(f.right.tasks * f.right.rows)} {
		t.Errorf("input rows %v over all partitions", in)
	}
}

// TestSortOp sorts every partition on its owner and on another node and
// compares with a stable sort (nulls last) of the partition as read.
func TestSortOp(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if passes := newOpsFixture(t, ctx).checkSorts(t, ctx); passes != 0 {
		t.Errorf("sorts that fit the budget reported %d passes", passes)
	}
}

// TestSortOpInPasses: with a node-side op budget of 1 KiB, smaller than
// any partition's sort, each sort runs in passes (reading its partition
// once more per pass and holding one pass's rows at a time), on its owner
// and elsewhere, and gives the stable sort all the same.
func TestSortOpInPasses(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f := newOpsFixtureWith(t, ctx, service.Config{MemoryLimit: 64 << 20, OutputBatchRows: 16, OpMemory: 1 << 10})
	passes := f.checkSorts(t, ctx)
	if passes < 2*f.left.partitions { // the owner's sorts at least
		t.Errorf("%d passes in %d sorts, want at least 2 each on the owners", passes, 2*f.left.partitions)
	}
}

// checkSorts sorts every partition on its owner and on another node,
// compares with a stable sort (nulls last) of the partition as read, and
// returns the passes the sorts reported.
func (f *opsFixture) checkSorts(t *testing.T, ctx context.Context) (passes int) {
	t.Helper()
	for p := range f.left.partitions {
		var part []kv
		if err := f.res[0].Read(ctx, p, func(rec arrow.Record) error { part = append(part, kvRows(rec)...); return nil }); err != nil {
			t.Fatal(err)
		}
		want := refSort(part)
		for _, addr := range []string{f.res[0].Endpoints[p].Addr, f.notOwner(p)} {
			var got []kv
			st, err := f.c.Sort(ctx, addr, "ops-l", p, "key", func(rec arrow.Record) error { got = append(got, kvRows(rec)...); return nil })
			if err != nil || st.InputRows[0] != int64(len(part)) {
				t.Fatalf("partition %d on %s: %+v, %v", p, addr, st, err)
			}
			if !slices.EqualFunc(got, want, func(a, b kv) bool { return cell(a.key) == cell(b.key) && a.val == b.val }) {
				t.Errorf("partition %d on %s: sorted rows differ from a stable sort (%d passes)", p, addr, st.Passes)
			}
			passes += st.Passes
		}
	}
	return passes
}

// TestOpsWaitForMemory: with a node-side op budget of one byte, every op
// takes the whole budget, so ops sent to one node at once run one at a
// time. All of them (joins that read both inputs from other nodes, and
// sorts) still give every row, and each gives its memory back: no node
// holds any once they are done.
func TestOpsWaitForMemory(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	f := newOpsFixtureWith(t, ctx, service.Config{MemoryLimit: 64 << 20, OutputBatchRows: 16, OpMemory: 1})
	addr := f.notOwner(0)
	var mu sync.Mutex
	var joined []string
	sorted := 0
	var wg sync.WaitGroup
	errs := make(chan error, 2*f.left.partitions)
	for p := range f.left.partitions {
		wg.Go(func() {
			_, err := f.c.Join(ctx, addr, "ops-l", "ops-r", p, dfops.DefaultJoinSpec("key"), func(rec arrow.Record) error {
				mu.Lock()
				defer mu.Unlock()
				joined = append(joined, joinRows(rec)...)
				return nil
			})
			errs <- err
		})
		wg.Go(func() {
			_, err := f.c.Sort(ctx, addr, "ops-l", p, "key", func(rec arrow.Record) error {
				mu.Lock()
				defer mu.Unlock()
				sorted += int(rec.NumRows())
				return nil
			})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(joined)
	if want := refJoin(f.left.allRows(), f.right.allRows(), "inner"); !slices.Equal(joined, want) {
		t.Errorf("joined %d rows, want %d", len(joined), len(want))
	}
	if want := f.left.tasks * f.left.rows; sorted != want {
		t.Errorf("sorted %d rows, want %d", sorted, want)
	}
	for _, n := range f.nodes {
		if st := n.Service.Stats(); st.OpMemory != 0 || st.OpsWaiting != 0 || st.OpMemoryLimit != 1 {
			t.Errorf("node %s after every op: %d bytes of op memory held, %d ops waiting, limit %d",
				n.Name(), st.OpMemory, st.OpsWaiting, st.OpMemoryLimit)
		}
	}
}

// refSort sorts rows by key, stably, nulls last.
func refSort(rows []kv) []kv {
	out := slices.Clone(rows)
	slices.SortStableFunc(out, func(a, b kv) int {
		switch {
		case a.key == nil || b.key == nil:
			return cmp.Compare(boolInt(a.key == nil), boolInt(b.key == nil))
		}
		return cmp.Compare(*a.key, *b.key)
	})
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// rawOp sends ticket as a DoGet to addr and reads the stream to its end.
func rawOp(ctx context.Context, addr string, ticket []byte) error {
	fc, err := api.Dial(addr)
	if err != nil {
		return err
	}
	defer fc.Close()
	stream, err := fc.DoGet(ctx, &flight.Ticket{Ticket: ticket})
	if err != nil {
		return err
	}
	for {
		if _, err := stream.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// TestOpBadTickets: bad tickets, unknown shuffles, reads before the seal and
// array shuffles get the status codes a client acts on, with messages naming
// the shuffle, partition and node.
func TestOpBadTickets(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f := newOpsFixture(t, ctx)
	open := f.left.spec(t, "ops-open", "")
	arr := spec.ArraySpec("ops-array", "<f8", spec.Chunks{{2, 2}}, spec.Chunks{{4}})
	for _, sp := range []*spec.Spec{open, arr} {
		if err := f.c.Create(ctx, sp); err != nil {
			t.Fatal(err)
		}
	}
	owner, other := f.res[0].Endpoints[3].Addr, f.notOwner(3)
	openOwner := owners(t, ctx, owner, "ops-open")[3]
	join := `"join":{"left_on":["key"],"right_on":["key"]}`
	for _, tc := range []struct {
		name, addr, ticket string
		code               codes.Code
		mention            []string
	}{
		{"not JSON", owner, `{"op":`, codes.InvalidArgument, []string{"ticket"}},
		{"unknown op", owner, `{"op":"cross","shuffles":["ops-l","ops-r"],"partition":3}`, codes.InvalidArgument, []string{`"cross"`}},
		{"empty op", owner, `{"op":"","shuffles":["ops-l"],"partition":3,"column":"key"}`, codes.InvalidArgument, []string{"op"}},
		{"unknown field", owner, `{"op":"sort","shuffles":["ops-l"],"partition":3,"column":"key","colour":1}`, codes.InvalidArgument, []string{"colour"}},
		{"join of one shuffle", owner, `{"op":"join","shuffles":["ops-l"],"partition":3,` + join + `}`, codes.InvalidArgument, []string{"2 shuffles"}},
		{"join without join", owner, `{"op":"join","shuffles":["ops-l","ops-r"],"partition":3}`, codes.InvalidArgument, []string{`"join"`}},
		{"bad how", owner, `{"op":"join","shuffles":["ops-l","ops-r"],"partition":3,"join":{"left_on":["key"],"right_on":["key"],"how":"sideways"}}`, codes.InvalidArgument, []string{"sideways"}},
		{"three suffixes", owner, `{"op":"join","shuffles":["ops-l","ops-r"],"partition":3,"join":{"left_on":["key"],"right_on":["key"],"suffixes":["a","b","c"]}}`, codes.InvalidArgument, []string{"3 suffixes"}},
		{"negative partition", owner, `{"op":"sort","shuffles":["ops-l"],"partition":-1,"column":"key"}`, codes.InvalidArgument, []string{"-1"}},
		{"bad shuffle ID", owner, `{"op":"sort","shuffles":["a/b"],"partition":0,"column":"key"}`, codes.InvalidArgument, []string{"a/b"}},
		{"unknown join column", owner, `{"op":"join","shuffles":["ops-l","ops-r"],"partition":3,"join":{"left_on":["nope"],"right_on":["key"]}}`, codes.InvalidArgument, []string{"nope", "ops-l and ops-r partition 3 on node " + f.names[owner]}},
		{"unknown sort column", owner, `{"op":"sort","shuffles":["ops-l"],"partition":3,"column":"nope"}`, codes.InvalidArgument, []string{"nope", "ops-l partition 3 on node " + f.names[owner]}},
		{"partition out of range", owner, `{"op":"sort","shuffles":["ops-l"],"partition":8,"column":"key"}`, codes.InvalidArgument, []string{"partition 8", "0..7"}},
		{"unknown shuffle", owner, `{"op":"join","shuffles":["ops-l","nope"],"partition":3,` + join + `}`, codes.NotFound, []string{"nope", "partition 3", "on node " + f.names[owner]}},
		{"before the seal, on the owner", openOwner, `{"op":"sort","shuffles":["ops-open"],"partition":3,"column":"key"}`, codes.FailedPrecondition, []string{"ops-open", "partition 3"}},
		{"before the seal, elsewhere", other, `{"op":"join","shuffles":["ops-l","ops-open"],"partition":3,` + join + `}`, codes.FailedPrecondition, []string{"ops-open", "partition 3", "on node " + f.names[other]}},
		{"write without an output root", owner, `{"op":"sort","shuffles":["ops-l"],"partition":3,"column":"key","write":{"path":"/tmp/p.parquet"}}`, codes.PermissionDenied, []string{"output root", "ops-l partition 3 on node " + f.names[owner]}},
		{"array shuffle", owner, `{"op":"sort","shuffles":["ops-array"],"partition":0,"column":"data"}`, codes.InvalidArgument, []string{"ops-array", "array"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := rawOp(ctx, tc.addr, []byte(tc.ticket))
			t.Log(err)
			wantCode(t, tc.name, err, tc.code)
			for _, m := range tc.mention {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not mention %q", err, m)
				}
			}
		})
	}
}
