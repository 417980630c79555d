package api

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/client"
	"github.com/shufflenode/shufflenode/flightproto"
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
	res, err := client.Run(ctx, client.Job{Spec: sp, Nodes: []string{addr}, Input: func(p int) ([]arrow.Record, error) {
		return []arrow.Record{table.GenTask(memory.DefaultAllocator, gen, p, sp.Tasks)}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Close(context.Background()) })
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
	fc, err := flightproto.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Close()
	b, _ := json.Marshal(tk)
	stream, err := fc.DoGet(ctx, &flight.Ticket{Ticket: b})
	if err != nil {
		t.Fatal(err)
	}
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
	res, err := client.Run(ctx, client.Job{Spec: sp, Nodes: []string{addr}, Input: func(p int) ([]arrow.Record, error) {
		return []arrow.Record{table.GenTask(memory.DefaultAllocator, gen, p, sp.Tasks)}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Close(context.Background()) })
	fc, err := flightproto.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Close()
	parts := []int{2, 0, 1}
	b, _ := json.Marshal(flightproto.Ticket{Shuffle: sp.ID, Partitions: parts})
	stream, err := fc.DoGet(ctx, &flight.Ticket{Ticket: b})
	if err != nil {
		t.Fatal(err)
	}
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
