package api

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/shufflenode/shufflenode/client"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/splitaxes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// rowsChunk is old chunk r (row r) of a rows x cols f8 array chunked by
// rows, each element its C-order index; a chunk of cols-1 columns when
// short.
func rowsChunk(t *testing.T, r, cols int, short bool) rechunk.Chunk {
	t.Helper()
	n := cols
	if short {
		n--
	}
	dt, err := rechunk.ParseDType("<f8")
	if err != nil {
		t.Fatal(err)
	}
	c, err := rechunk.NewChunk(dt, []int64{1, int64(n)})
	if err != nil {
		t.Fatal(err)
	}
	for j := range n {
		binary.LittleEndian.PutUint64(c.Data[8*j:], math.Float64bits(float64(r*cols+j)))
	}
	return c
}

// TestPutTasksTakesArrayChunks: a DoPut of several tasks of an array
// shuffle puts each task's chunk as its own DoPut would: a chunk of the
// wrong shape fails alone (InvalidArgument) and runs again; client.Run
// puts the chunks of another rechunk several to a stream, and every
// element is read back where it belongs.
func TestPutTasksTakesArrayChunks(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	addr := startServer(t)
	const rows, cols = 12, 6
	old := spec.Chunks{make([]int64, rows), {cols}}
	for i := range old[0] {
		old[0][i] = 1
	}
	sp := spec.ArraySpec("array-tags", "<f8", old, spec.Chunks{{4, 4, 4}, {3, 3}})
	c := createOn(ctx, t, addr, sp)
	tasks := []client.TaskPut{{Task: 0}, {Task: 1}, {Task: 2}}
	input := func(i int) ([]arrow.Record, error) {
		return []arrow.Record{ChunkRecord(rowsChunk(t, i, cols, i == 1))}, nil
	}
	out, err := c.PutTasks(ctx, sp.ID, flightproto.ArraySchema("<f8"), tasks, input)
	if err != nil {
		t.Fatal(err)
	}
	if out[0].Err != nil || out[2].Err != nil || status.Code(out[1].Err) != codes.InvalidArgument {
		t.Fatalf("outcomes %+v: want chunks 0 and 2 put, 1 (a column short) refused", out)
	}

	sp2 := spec.ArraySpec("array-batched", "<f8", old, spec.Chunks{{4, 4, 4}, {3, 3}})
	res, err := client.Run(ctx, client.Job{Spec: sp2, Nodes: []string{addr}, PutBatch: 5, Parallel: 2,
		Input: func(p int) ([]arrow.Record, error) {
			return []arrow.Record{ChunkRecord(rowsChunk(t, p, cols, false))}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close(ctx)
	grid := sp2.NewChunks.Grid()
	check := func(p int, got rechunk.Chunk) error {
		at := splitaxes.Unravel(p, grid)
		for i := range got.Shape[0] {
			for j := range got.Shape[1] {
				v := math.Float64frombits(binary.LittleEndian.Uint64(got.Data[8*(i*got.Shape[1]+j):]))
				if want := float64((int64(at[0])*4+i)*cols + int64(at[1])*3 + j); v != want {
					t.Errorf("new chunk %v element (%d, %d) is %v, want %v", at, i, j, v, want)
				}
			}
		}
		return nil
	}
	for p := range sp2.Partitions {
		if err := res.VisitChunk(ctx, p, func(got rechunk.Chunk) error { return check(p, got) }); err != nil {
			t.Fatal(err)
		}
	}
	// every chunk again, in one DoGet, in the order asked
	order := []int{5, 0, 3, 1, 4, 2}
	var seen []int
	err = res.VisitChunks(ctx, order, func(p int, got rechunk.Chunk) error {
		seen = append(seen, p)
		return check(p, got)
	})
	if err != nil || !slices.Equal(seen, order) {
		t.Fatalf("VisitChunks gave chunks %v (%v), want %v", seen, err, order)
	}
}

// TestManyChunksRefusesPack: an array shuffle's chunks are not packed.
func TestManyChunksRefusesPack(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	addr := startServer(t)
	runArray(ctx, t, addr, arraySpec("pack"))
	fc, err := flightproto.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Close()
	tk, _ := json.Marshal(flightproto.Ticket{Shuffle: "pack", Partitions: []int{0}, Pack: true})
	stream, err := fc.DoGet(ctx, &flight.Ticket{Ticket: tk})
	if err == nil {
		_, err = stream.Recv()
	}
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("packed read of an array shuffle: %v, want InvalidArgument", err)
	}
}
