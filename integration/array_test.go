package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/shufflenode/shufflenode/api"
	"github.com/shufflenode/shufflenode/client"
	"github.com/shufflenode/shufflenode/job"
	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/splitaxes"
	"google.golang.org/grpc/codes"
)

const unk = splitaxes.Unknown

// TestArrayRechunk rechunks arrays on a real cluster and checks every
// element of every new chunk against a direct computation.
func TestArrayRechunk(t *testing.T) {
	nodes := startCluster(t, 3, 64<<20)
	cases := []struct {
		name             string
		dtype            string
		old, new, actual spec.Chunks
	}{
		{"1-d as in Dask", "<f8", spec.Chunks{{10, 10, 10, 10, 10}}, spec.Chunks{{25, 5, 20}}, nil},
		{"2-d", "<i4", spec.Chunks{{3, 3, 4}, {5, 5}}, spec.Chunks{{10}, {2, 2, 2, 2, 2}}, nil},
		{"zero-size chunks", "|u1", spec.Chunks{{2, 0, 2}, {3, 3}, {1, 1}}, spec.Chunks{{1, 0, 1, 1, 1}, {6}, {2}}, nil},
		{"unknown-size axis", "<c16", spec.Chunks{{unk, unk}, {4, 4}}, spec.Chunks{{unk, unk}, {2, 2, 2, 2}}, spec.Chunks{{3, 5}, {4, 4}}},
		{"4-d big-endian", ">i2", spec.Chunks{{2, 2}, {3}, {1, 1, 1}, {4}}, spec.Chunks{{4}, {1, 2}, {3}, {2, 2}}, nil},
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for i := range 6 {
		old, new := randomChunkings(rng)
		dtypes := []string{"<f8", "<f4", "<i8", "|b1", "<u2", ">f8", "<c8"}
		cases = append(cases, struct {
			name             string
			dtype            string
			old, new, actual spec.Chunks
		}{fmt.Sprintf("random %d", i), dtypes[rng.IntN(len(dtypes))], old, new, nil})
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, err := job.RunArrayDemo(ctx, apiAddrs(nodes), job.ArrayConfig{ID: fmt.Sprintf("arr-%d", i),
				DType: tc.dtype, Old: tc.old, New: tc.new, Actual: tc.actual})
			if err != nil {
				t.Fatalf("old %v new %v: %v", tc.old, tc.new, err)
			}
		})
	}
}

// randomChunkings returns random old and new chunkings of one random shape
// (1-4 dims, some zero-size chunks).
func randomChunkings(rng *rand.Rand) (spec.Chunks, spec.Chunks) {
	nd := 1 + rng.IntN(4)
	old, new := make(spec.Chunks, nd), make(spec.Chunks, nd)
	for a := range nd {
		total := int64(rng.IntN(9))
		old[a], new[a] = randomSplit(rng, total), randomSplit(rng, total)
	}
	return old, new
}

func randomSplit(rng *rand.Rand, total int64) []int64 {
	var out []int64
	for total > 0 || len(out) == 0 {
		n := min(total, int64(rng.IntN(4)))
		out = append(out, n)
		total -= n
	}
	return out
}

// TestArray1000To1000 rechunks a (2000, 2000) float64 array from 1000 row
// chunks to 1000 column chunks: a million pieces.
func TestArray1000To1000(t *testing.T) {
	if testing.Short() {
		t.Skip("a million pieces: skipped with -short")
	}
	nodes := startCluster(t, 4, 256<<20)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rows, cols := make([]int64, 1000), make([]int64, 1000)
	for i := range rows {
		rows[i], cols[i] = 2, 2
	}
	rep, err := job.RunArrayDemo(ctx, apiAddrs(nodes), job.ArrayConfig{ID: "arr-1000",
		Old: spec.Chunks{rows, {2000}}, New: spec.Chunks{{2000}, cols}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d -> %d chunks, %d bytes: %.2f s, %.1f MB/s", rep.OldChunks, rep.NewChunks, rep.Bytes, rep.TotalSeconds, rep.MBps())
}

// TestArrayWrongChunkShape puts a chunk of the wrong shape: it is refused
// with the expected and actual shapes.
func TestArrayWrongChunkShape(t *testing.T) {
	nodes := startCluster(t, 2, 64<<20)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := client.Dial(nodes[0].APIAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sp := spec.ArraySpec("wrong", "<f8", spec.Chunks{{4, 4}}, spec.Chunks{{8}})
	if err := c.Create(ctx, sp); err != nil {
		t.Fatal(err)
	}
	dt, _ := rechunk.ParseDType("<f8")
	for _, bad := range []rechunk.Chunk{
		{DType: dt, Shape: []int64{3}, Data: make([]byte, 24)},
		{DType: dt, Shape: []int64{4}, Data: make([]byte, 31)},
		{DType: rechunk.DType{}, Shape: []int64{4}, Data: make([]byte, 32)},
	} {
		rec := chunkRecordOrEmpty(bad)
		_, err := c.Put(ctx, api.PutCmd{Shuffle: "wrong", Task: 0}, rec.Schema(), records(rec))
		rec.Release()
		wantCode(t, fmt.Sprintf("chunk %v of %d bytes", bad.Shape, len(bad.Data)), err, codes.InvalidArgument)
		if !strings.Contains(err.Error(), "want dtype <f8 shape [4]") && !strings.Contains(err.Error(), "dtype") {
			t.Errorf("error does not say what was expected: %v", err)
		}
	}
	// A malformed one (two rows) is refused too.
	good := rechunk.Chunk{DType: dt, Shape: []int64{4}, Data: make([]byte, 32)}
	r1, r2 := api.ChunkRecord(good), api.ChunkRecord(good)
	defer r1.Release()
	defer r2.Release()
	_, err = c.Put(ctx, api.PutCmd{Shuffle: "wrong", Task: 0}, r1.Schema(), records(r1, r2))
	wantCode(t, "two chunks in one put", err, codes.InvalidArgument)
}

// chunkRecordOrEmpty encodes c; a zero DType gets a bogus dtype string.
func chunkRecordOrEmpty(c rechunk.Chunk) arrow.Record {
	if c.DType == (rechunk.DType{}) {
		dt, _ := rechunk.ParseDType("<i8")
		c.DType = dt
	}
	return api.ChunkRecord(c)
}
