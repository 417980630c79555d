package parquetio

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// codecBench is one column encoding this package writes and reads itself:
// a column written with plan, by either writer and read by
// either reader.
type codecBench struct {
	name     string
	typ      arrow.DataType
	nullable bool // every 10th row null
	plan     colPlan
	value    func(rng *rand.Rand, i int) any
}

// codecBenches are the encodings of the flat writer (flatwrite.go,
// flatdict.go), one column each; those of strings are also the reader's
// own decoders' (fastread.go).
func codecBenches() []codecBench {
	sorted := func(_ *rand.Rand, i int) any { return int64(i) * 1000 }
	ids := func(rng *rand.Rand, _ int) any { return rng.Int64N(1 << 20) }
	floats := func(_ *rand.Rand, i int) any { return float64(i) / 3 }
	tags := func(rng *rand.Rand, _ int) any { return fmt.Sprintf("t%07d", rng.IntN(1<<20)) }
	smallInts := func(rng *rand.Rand, _ int) any { return int64(rng.IntN(1000)) << 20 }
	smallTags := func(rng *rand.Rand, _ int) any { return fmt.Sprintf("tag-%06d", rng.IntN(1000)) }
	i64, f64, str := arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64, arrow.BinaryTypes.String
	return []codecBench{
		{name: "delta-int64-sorted", typ: i64, plan: colPlan{codec: Uncompressed, delta: true, noDict: true}, value: sorted},
		{name: "delta-int64-random", typ: i64, plan: colPlan{codec: Uncompressed, delta: true, noDict: true}, value: ids},
		{name: "plain-int64-snappy", typ: i64, plan: colPlan{codec: Snappy, noDict: true}, value: ids},
		{name: "plain-float64", typ: f64, plan: colPlan{codec: Uncompressed, noDict: true}, value: floats},
		{name: "plain-float64-nullable", typ: f64, nullable: true, plan: colPlan{codec: Uncompressed, noDict: true}, value: floats},
		{name: "plain-string-snappy", typ: str, plan: colPlan{codec: Snappy, noDict: true}, value: tags},
		{name: "delta-length-string", typ: str, plan: colPlan{codec: Uncompressed, delta: true, noDict: true}, value: tags},
		{name: "dict-int64", typ: i64, plan: colPlan{codec: Snappy}, value: smallInts},
		{name: "dict-string", typ: str, plan: colPlan{codec: Snappy}, value: smallTags},
		{name: "dict-string-nullable", typ: str, nullable: true, plan: colPlan{codec: Snappy}, value: smallTags},
	}
}

// record makes c's column of rows rows.
func (c codecBench) record(rows int) arrow.Record {
	schema := arrow.NewSchema([]arrow.Field{{Name: "c", Type: c.typ, Nullable: c.nullable}}, nil)
	bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer bld.Release()
	rng := rand.New(rand.NewPCG(5, 5))
	for i := range rows {
		if c.nullable && i%10 == 3 {
			bld.Field(0).AppendNull()
			continue
		}
		switch fb := bld.Field(0).(type) {
		case *array.Int64Builder:
			fb.Append(c.value(rng, i).(int64))
		case *array.Float64Builder:
			fb.Append(c.value(rng, i).(float64))
		case *array.StringBuilder:
			fb.Append(c.value(rng, i).(string))
		}
	}
	return bld.NewRecord()
}

// writeCodec writes rec to path with plan, by the flat writer or Arrow's.
func writeCodec(b *testing.B, path string, rec arrow.Record, plan colPlan, flat bool) {
	w, err := Create(path, rec.Schema(), WriteConfig{DeferSync: true, arrowWriter: !flat})
	if err != nil {
		b.Fatal(err)
	}
	if err := w.startPlans(map[string]colPlan{"c": plan}, true); err != nil {
		b.Fatal(err)
	}
	if (w.flat != nil) != flat {
		b.Fatalf("flat writer used: %v, want %v", w.flat != nil, flat)
	}
	if err := w.Write(rec); err != nil {
		b.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkCodecs writes and reads 256K rows of one column in each encoding
// this package has its own code for: write/<codec>/flat against
// write/<codec>/arrow (the same plan), and, for the columns this package
// decodes itself, read/<codec>/ours against read/<codec>/arrow (the same
// file, Arrow's writer's, in batches of DefaultBatchRows). Run it back to back with several -count and compare
// ratios: that is what decides whether an encoding keeps its own code.
func BenchmarkCodecs(b *testing.B) {
	const rows = 1 << 18
	for _, c := range codecBenches() {
		rec := c.record(rows)
		size := int64(8 * rows) // value bytes, as PLAIN lays them out
		if c.typ.ID() == arrow.STRING {
			size = int64(len(rec.Column(0).(*array.String).ValueBytes())) + 4*rows
		}
		dir := b.TempDir()
		for _, flat := range []bool{true, false} {
			b.Run(fmt.Sprintf("write/%s/%s", c.name, map[bool]string{true: "flat", false: "arrow"}[flat]), func(b *testing.B) {
				path := filepath.Join(dir, "w.parquet")
				b.SetBytes(size)
				b.ReportAllocs()
				for b.Loop() {
					writeCodec(b, path, rec, c.plan, flat)
				}
			})
		}
		path := filepath.Join(dir, "r.parquet")
		writeCodec(b, path, rec, c.plan, false)
		rec.Release()
		if countFast(fastKindsOf(b, path)) == 0 {
			continue // Arrow's reader reads it either way
		}
		b.Run(fmt.Sprintf("read/%s/ours", c.name), func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				recs, err := ReadFile(context.Background(), path, nil, DefaultBatchRows)
				if err != nil {
					b.Fatal(err)
				}
				releaseRecs(recs)
			}
		})
		b.Run(fmt.Sprintf("read/%s/arrow", c.name), func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				releaseRecs(arrowOnly(b, path, DefaultBatchRows))
			}
		})
	}
}

// fastKindsOf returns how each column of the file at path is decoded.
func fastKindsOf(b *testing.B, path string) []colKind {
	rdr, err := file.OpenParquetFile(path, false)
	if err != nil {
		b.Fatal(err)
	}
	defer rdr.Close()
	schema, err := pqarrow.FromParquet(rdr.MetaData().Schema, nil, rdr.MetaData().KeyValueMetadata())
	if err != nil {
		b.Fatal(err)
	}
	return fastColumns(rdr, schema)
}
