package parquetio

import (
	"context"
	"maps"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet/file"
)

// autoSchema has compressible columns (small ints, repeated strings) and
// incompressible ones (random float64 bits, wide random ids).
func autoSchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "small", Type: arrow.PrimitiveTypes.Int64},
		{Name: "val", Type: arrow.PrimitiveTypes.Float64},
		{Name: "word", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	}, nil)
}

// autoRecord makes rows of autoSchema; with zeroVal the val column is all
// zeros (compressible).
func autoRecord(mem memory.Allocator, rows int, seed uint64, zeroVal bool) arrow.Record {
	b := array.NewRecordBuilder(mem, autoSchema())
	defer b.Release()
	rng := rand.New(rand.NewPCG(seed, 2))
	words := []string{"alpha", "beta", "gamma", "delta"}
	for i := range rows {
		b.Field(0).(*array.Int64Builder).Append(rng.Int64N(100))
		v := math.Float64frombits(rng.Uint64() &^ (1 << 62)) // finite (exponent < 0x400), random bits
		if zeroVal {
			v = 0
		}
		b.Field(1).(*array.Float64Builder).Append(v)
		b.Field(2).(*array.StringBuilder).Append(words[i%len(words)])
		b.Field(3).(*array.Int64Builder).Append(int64(rng.Uint64()))
	}
	return b.NewRecord()
}

// all returns every column of autoSchema with c.
func all(c Compression) map[string]Compression {
	return map[string]Compression{"small": c, "val": c, "word": c, "id": c}
}

func TestAutoCompression(t *testing.T) {
	chosen := map[string]Compression{"small": Snappy, "val": Uncompressed, "word": Snappy, "id": Uncompressed}
	cases := []struct {
		name    string
		cfg     WriteConfig
		rows    []int // rows of each record; 0 rows is an empty record
		zeroVal bool  // the first record's val column is all zeros
		want    map[string]Compression
	}{
		{"auto", WriteConfig{Compression: Auto}, []int{20000}, false, chosen},
		{"default is auto", WriteConfig{}, []int{20000}, false, chosen},
		{"auto no dictionary", WriteConfig{Compression: Auto, NoDictionary: true}, []int{20000}, false, chosen},
		{"auto small record", WriteConfig{Compression: Auto}, []int{300}, false, chosen},
		{"auto after an empty record", WriteConfig{Compression: Auto}, []int{0, 20000}, false, chosen},
		{"auto decides on the first record", WriteConfig{Compression: Auto, RowGroupRows: 5000}, []int{3000, 20000}, true,
			map[string]Compression{"small": Snappy, "val": Snappy, "word": Snappy, "id": Uncompressed}},
		{"auto empty file", WriteConfig{Compression: Auto}, nil, false, all(Snappy)},
		{"auto only empty records", WriteConfig{Compression: Auto}, []int{0, 0}, false, all(Snappy)},
		{"snappy", WriteConfig{Compression: Snappy}, []int{20000}, false, all(Snappy)},
		{"zstd", WriteConfig{Compression: Zstd}, []int{20000}, false, all(Zstd)},
		{"none", WriteConfig{Compression: Uncompressed}, []int{20000}, false, all(Uncompressed)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			var in []arrow.Record
			for i, n := range tc.rows {
				in = append(in, autoRecord(mem, n, uint64(i), tc.zeroVal && i == 0))
			}
			defer releaseRecs(in)
			path := filepath.Join(t.TempDir(), "f.parquet")
			got := writeCodecs(t, path, in, tc.cfg)
			if !maps.Equal(got, tc.want) {
				t.Errorf("Codecs() = %v, want %v", got, tc.want)
			}
			checkChunkCodecs(t, path, tc.want)
			checkRoundTrip(t, mem, path, in)
		})
	}
}

// writeCodecs writes recs to path with cfg and returns the writer's Codecs.
func writeCodecs(t *testing.T, path string, recs []arrow.Record, cfg WriteConfig) map[string]Compression {
	t.Helper()
	w, err := Create(path, autoSchema(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	return w.Codecs()
}

// checkChunkCodecs checks the codec of every column chunk in the file's
// metadata against want.
func checkChunkCodecs(t *testing.T, path string, want map[string]Compression) {
	t.Helper()
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for g := range r.NumRowGroups() {
		rg := r.MetaData().RowGroup(g)
		for c := range rg.NumColumns() {
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				t.Fatal(err)
			}
			name := cc.PathInSchema().String()
			if wc, _ := want[name].codec(); cc.Compression() != wc {
				t.Errorf("row group %d column %s: codec %v, want %v", g, name, cc.Compression(), wc)
			}
		}
	}
}

// checkRoundTrip reads path back and compares its rows with in.
func checkRoundTrip(t *testing.T, mem memory.Allocator, path string, in []arrow.Record) {
	t.Helper()
	out, err := ReadFile(context.Background(), path, mem, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseRecs(out)
	want, got := concatAll(t, mem, autoSchema(), in), concatAll(t, mem, autoSchema(), out)
	defer want.Release()
	defer got.Release()
	if !array.RecordEqual(want, got) {
		t.Fatalf("records differ: want %d rows, got %d", want.NumRows(), got.NumRows())
	}
}

// TestValueSample checks the sampled bytes of sliced arrays of each layout.
func TestValueSample(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rec := genRecord(mem, allTypes(), 1000, 3)
	defer rec.Release()
	slice := rec.NewSlice(13, 1000)
	defer slice.Release()
	for i, f := range slice.Schema().Fields() {
		t.Run(f.Name, func(t *testing.T) {
			col := slice.Column(i)
			wantRaw, wantLimited := sampleSizes(col)
			if got := sampleLen(valueSample(col, 1<<20)); got != wantRaw {
				t.Errorf("whole sample %d bytes, want %d", got, wantRaw)
			}
			if got := sampleLen(valueSample(col, 256)); got > wantLimited {
				t.Errorf("256-byte sample %d bytes, want <= %d", got, wantLimited)
			}
			if col.IsValid(0) && !startsAtRow0(col, valueSample(col, 256)) {
				t.Error("sample does not start at row 0")
			}
		})
	}
}

// sampleSizes returns the bytes of a's values (data and offsets for
// variable width) and the most a sample limited to 256 bytes may hold
// (about 256: the rows of a variable-width sample are chosen from the
// average width).
func sampleSizes(a arrow.Array) (whole, limited int) {
	switch v := a.(type) {
	case *array.String:
		return len(v.ValueBytes()) + 4*(v.Len()+1), 2 * 256
	case *array.Binary:
		return len(v.ValueBytes()) + 4*(v.Len()+1), 2 * 256
	case *array.LargeString:
		return len(v.ValueBytes()) + 8*(v.Len()+1), 2 * 256
	case *array.LargeBinary:
		return len(v.ValueBytes()) + 8*(v.Len()+1), 2 * 256
	case *array.Boolean:
		return (a.Data().Offset()+a.Len()+7)/8 - a.Data().Offset()/8, 256
	}
	w := a.DataType().(arrow.FixedWidthDataType).Bytes()
	return w * a.Len(), 256
}

func sampleLen(parts [][]byte) int {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	return n
}

// startsAtRow0 reports whether the sample of a starts at its first row
// (for the layouts it knows; true for others).
func startsAtRow0(a arrow.Array, parts [][]byte) bool {
	switch v := a.(type) {
	case *array.Int64:
		return arrow.Int64Traits.CastFromBytes(parts[0])[0] == v.Value(0)
	case *array.String:
		return string(parts[0][:v.ValueLen(0)]) == v.Value(0)
	case *array.LargeBinary:
		return string(parts[0][:v.ValueLen(0)]) == string(v.Value(0))
	}
	return true
}
