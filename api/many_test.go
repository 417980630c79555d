package api

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/client"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/simnet"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/table"
	"google.golang.org/grpc/codes"
)

// TestDoGetManyPartitions runs a dataframe shuffle on a node and checks
// that one multi-partition DoGet (a list in any order, and a range) gives
// each partition the row ids its own DoGet gives, and that bad tickets are
// refused with InvalidArgument.
func TestDoGetManyPartitions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	addr := startServer(t)
	sp := dataframeSpec(t, "many")
	gen := table.GenConfig{Rows: 3000, Seed: 7, PayloadBytes: 4}
	res := runGenerated(ctx, t, addr, sp, gen)
	want := make([][]int64, sp.Partitions)
	for p := range want {
		err := res.Read(ctx, p, func(rec arrow.Record) error { want[p] = appendIDs(want[p], rec); return nil })
		if err != nil {
			t.Fatal(err)
		}
	}
	c, err := client.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, parts := range [][]int{{2, 0, 1}, {1}} {
		got := map[int][]int64{}
		var ended []int
		err := c.ReadPartitions(ctx, addr, sp.ID, parts, func(p int, rec arrow.Record) error { got[p] = appendIDs(got[p], rec); return nil },
			func(p int) error { ended = append(ended, p); return nil })
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ended, parts) {
			t.Errorf("partitions %v ended as %v", parts, ended)
		}
		for _, p := range parts {
			if !slices.Equal(got[p], want[p]) {
				t.Errorf("partition %d: %d rows in one DoGet of %v, %d alone", p, len(got[p]), parts, len(want[p]))
			}
		}
	}
	if n := countRows(ctx, t, addr, flightproto.Ticket{Shuffle: sp.ID, Range: []int{0, 3}}); n != 3000 {
		t.Errorf("a range of every partition streams %d rows, want 3000", n)
	}
	fc, err := flightproto.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Close()
	for _, tk := range []flightproto.Ticket{
		{Shuffle: sp.ID, Partitions: []int{0, 3}},
		{Shuffle: sp.ID, Partitions: []int{1, 1}},
		{Shuffle: sp.ID, Range: []int{2, 1}},
		{Shuffle: sp.ID, Partitions: []int{0}, Range: []int{0, 1}},
	} {
		b, _ := json.Marshal(tk)
		stream, err := fc.DoGet(ctx, &flight.Ticket{Ticket: b})
		if err == nil {
			_, err = stream.Recv()
		}
		wantCode(t, err, codes.InvalidArgument)
	}
}

// appendIDs appends the id column of rec to ids.
func appendIDs(ids []int64, rec arrow.Record) []int64 {
	return append(ids, rec.Column(1).(*array.Int64).Int64Values()...)
}

// countRows reads a ticket's stream and counts its rows.
func countRows(ctx context.Context, t *testing.T, addr string, tk flightproto.Ticket) int64 {
	t.Helper()
	stream := openDoGet(ctx, t, addr, tk)
	rdr, err := flightproto.NewReader(stream, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	var n int64
	for rdr.Next() {
		n += rdr.Record().NumRows()
	}
	if err := rdr.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestPartitionEndsStandard reads a multi-partition DoGet with Arrow's own
// Flight reader: every end after the first is sent as the first one's
// encoded bytes with new app metadata, and must still be a well-formed
// empty batch of the schema, each with its own partition's end, in order.
func TestPartitionEndsStandard(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	addr := startServer(t)
	sp := dataframeSpec(t, "ends")
	gen := table.GenConfig{Rows: 500, Seed: 3, PayloadBytes: 4}
	runGenerated(ctx, t, addr, sp, gen)
	parts := []int{2, 0, 1}
	stream := openDoGet(ctx, t, addr, flightproto.Ticket{Shuffle: sp.ID, Partitions: parts})
	rdr, err := flight.NewRecordReader(stream)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	var ended []int
	var rows int64
	for rdr.Next() {
		rows += rdr.Record().NumRows()
		end, ok, err := flightproto.DecodePartitionEnd(rdr.LatestAppMetadata())
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			if n := rdr.Record().NumRows(); n != 0 || rdr.Record().NumCols() != int64(rdr.Schema().NumFields()) {
				t.Errorf("the end of partition %d is a batch of %d rows and %d columns", end.Partition, n, rdr.Record().NumCols())
			}
			ended = append(ended, end.Partition)
		}
	}
	if err := rdr.Err(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ended, parts) || rows != 500 {
		t.Errorf("ends %v and %d rows, want %v and 500", ended, rows, parts)
	}
}

// TestAppendPartitionEnd: the end metadata is what encoding/json makes of
// flightproto.PartitionEnd.
func TestAppendPartitionEnd(t *testing.T) {
	for _, p := range []int{0, 1, 9, 10, 65535, 1 << 22} {
		want, _ := json.Marshal(flightproto.PartitionEnd{Partition: p, End: true})
		if got := appendPartitionEnd([]byte("x"), p); string(got) != "x"+string(want) {
			t.Errorf("partition %d: %s, want %s", p, got[1:], want)
		}
	}
}

// startServers starts n nodes of one in-memory network, each with its API
// (the address its member gives).
func startServers(t *testing.T, n int) []string {
	t.Helper()
	apiAddrs := map[string]string{}
	cfg := simnet.DefaultConfig()
	cfg.APIAddr = func(name string) string { return apiAddrs[name] }
	nw, err := simnet.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nw.Close() })
	addrs := make([]string, n)
	for i := range addrs {
		svc, err := service.New(service.Config{Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { svc.Close() })
		srv, err := Listen("127.0.0.1:0", svc, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		name := fmt.Sprintf("node-%d", i)
		addrs[i], apiAddrs[name] = srv.Addr(), srv.Addr()
		nd, err := nw.Add(name, svc.Handle)
		if err != nil {
			t.Fatal(err)
		}
		nd.SetStreamHandler(svc.HandleStream)
		svc.Attach(nd)
		srv.Start()
	}
	return addrs
}

// TestDoGetManyPacked reads every partition of shuffles on two nodes in
// one packed DoGet to the first node (half of them through it, from the
// second), and checks each partition gets the row ids its own DoGet
// gives, and that small partitions share batches: many small ones, many of
// them empty (1,500 partitions of 1,000 rows), and a few as large as a
// batch (8 of 200,000 rows), which go as they are, each with the end of
// the one before it.
func TestDoGetManyPacked(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	addrs := startServers(t, 2)
	for _, tc := range []struct {
		name             string
		partitions, rows int
		maxBatches       int
	}{
		{"small", 1500, 1000, 2},
		{"large", 8, 200000, 9}, // a batch per partition, and the last end
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := dataframeSpec(t, "packed-"+tc.name)
			sp.Tasks, sp.Partitions = 4, tc.partitions
			gen := table.GenConfig{Rows: int64(tc.rows), Seed: 5, PayloadBytes: 4}
			res, err := client.Run(ctx, client.Job{Spec: sp, Nodes: addrs, Input: func(p int) ([]arrow.Record, error) {
				return []arrow.Record{table.GenTask(memory.DefaultAllocator, gen, p, sp.Tasks)}, nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { res.Close(context.Background()) })
			checkPacked(ctx, t, res, addrs[0], sp.ID, sp.Partitions, tc.maxBatches)
		})
	}
}

// checkPacked reads every partition of shuffle id from the node at addr in
// one packed DoGet, in reverse order, and compares each with its own read;
// the stream may carry at most maxBatches data batches.
func checkPacked(ctx context.Context, t *testing.T, res *client.Result, addr, id string, partitions, maxBatches int) {
	t.Helper()
	parts := make([]int, partitions)
	for i := range parts {
		parts[i] = partitions - 1 - i
	}
	c, err := client.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got := make([][]int64, partitions)
	var ended []int
	err = c.ReadPartitions(ctx, addr, id, parts, func(p int, rec arrow.Record) error {
		got[p] = appendIDs(got[p], rec)
		return nil
	}, func(p int) error { ended = append(ended, p); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ended, parts) {
		t.Fatalf("%d partitions ended, out of order or not all of %d", len(ended), len(parts))
	}
	var empty int
	for p := range partitions {
		var want []int64
		if err := res.Read(ctx, p, func(rec arrow.Record) error { want = appendIDs(want, rec); return nil }); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got[p], want) {
			t.Fatalf("partition %d: %d rows in a packed DoGet, %d alone", p, len(got[p]), len(want))
		}
		if len(want) == 0 {
			empty++
		}
	}
	if partitions > 100 && empty == 0 {
		t.Error("no partition is empty: the case does not test empty ones")
	}
	if g := res.ByOwner(parts, len(parts)); len(g) < 2 {
		t.Errorf("the partitions have %d owner(s): none is read through the node", len(g))
	}
	if n := countBatches(ctx, t, addr, flightproto.Ticket{Shuffle: id, Partitions: parts, Pack: true}); n > maxBatches {
		t.Errorf("%d partitions (%d empty) in %d batches, want at most %d", partitions, empty, n, maxBatches)
	}
}

// countBatches reads a ticket's stream with Arrow's Flight reader and
// counts its batches.
func countBatches(ctx context.Context, t *testing.T, addr string, tk flightproto.Ticket) int {
	t.Helper()
	stream := openDoGet(ctx, t, addr, tk)
	rdr, err := flight.NewRecordReader(stream)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	n := 0
	for rdr.Next() {
		n++
	}
	if err := rdr.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// runGenerated runs sp on the node at addr, task p's input generated by
// gen, and closes the shuffle when the test ends.
func runGenerated(ctx context.Context, t *testing.T, addr string, sp *spec.Spec, gen table.GenConfig) *client.Result {
	t.Helper()
	res, err := client.Run(ctx, client.Job{Spec: sp, Nodes: []string{addr}, Input: func(p int) ([]arrow.Record, error) {
		return []arrow.Record{table.GenTask(memory.DefaultAllocator, gen, p, sp.Tasks)}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Close(context.Background()) })
	return res
}

// openDoGet dials the node at addr and starts a DoGet of tk; the
// connection closes when the test ends.
func openDoGet(ctx context.Context, t *testing.T, addr string, tk flightproto.Ticket) flight.FlightService_DoGetClient {
	t.Helper()
	fc, err := flightproto.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fc.Close() })
	b, _ := json.Marshal(tk)
	stream, err := fc.DoGet(ctx, &flight.Ticket{Ticket: b})
	if err != nil {
		t.Fatal(err)
	}
	return stream
}
