package synth

// The gen-parquet command: synthetic Parquet inputs for merge, set-index and
// shuffle examples and benchmarks.

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/parquetio"
)

// ParquetConfig describes a generated table: rows split evenly over files
// gen-000.parquet ..., columns key (KeyType), id (int64, 0..rows-1 in file
// order), val (float64, id/3) and, with Tag, tag (string "t" + 7 digits).
type ParquetConfig struct {
	Dir         string
	Rows, Files int
	KeyType     string  // int64 or int32
	Cardinality int64   // keys uniform in [0, Cardinality); 0: key = id (unique)
	Skew, Nulls float64 // fractions of rows whose key is 0, or null
	Tag         bool
	Seed        uint64
}

// Validate checks the config.
func (c ParquetConfig) Validate() error {
	switch {
	case c.Dir == "":
		return errors.New("--output is required (a directory)")
	case c.Rows < 0 || c.Files < 1:
		return errors.New("--rows must be >= 0 and --files >= 1")
	case c.KeyType != "int64" && c.KeyType != "int32":
		return fmt.Errorf("--key-type %q: want int64 or int32", c.KeyType)
	case c.Skew < 0 || c.Nulls < 0 || c.Skew+c.Nulls > 1:
		return errors.New("--skew and --nulls are fractions whose sum is at most 1")
	case c.KeyType == "int32" && (c.Cardinality > 1<<31 || c.Cardinality == 0 && c.Rows > 1<<31):
		return errors.New("int32 keys need --keys (or --rows) below 2^31")
	}
	return nil
}

// Parquet writes the files.
func Parquet(c ParquetConfig) error {
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return err
	}
	schema := c.Schema()
	rng := rand.New(rand.NewPCG(c.Seed, uint64(c.Rows)))
	for f := range c.Files {
		rec := c.file(schema, rng, f)
		err := parquetio.WriteFile(filepath.Join(c.Dir, fmt.Sprintf("gen-%03d.parquet", f)), schema, []arrow.Record{rec})
		rec.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// Schema is the generated files' schema: the key column, id, val and,
// with Tag, tag.
func (c ParquetConfig) Schema() *arrow.Schema {
	key := arrow.DataType(arrow.PrimitiveTypes.Int64)
	if c.KeyType == "int32" {
		key = arrow.PrimitiveTypes.Int32
	}
	fields := []arrow.Field{{Name: "key", Type: key, Nullable: c.Nulls > 0}, {Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "val", Type: arrow.PrimitiveTypes.Float64}}
	if c.Tag {
		fields = append(fields, arrow.Field{Name: "tag", Type: arrow.BinaryTypes.String})
	}
	return arrow.NewSchema(fields, nil)
}

// file builds the record of file f.
func (c ParquetConfig) file(schema *arrow.Schema, rng *rand.Rand, f int) arrow.Record {
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := f * c.Rows / c.Files; i < (f+1)*c.Rows/c.Files; i++ {
		c.appendKey(b.Field(0), rng, int64(i))
		b.Field(1).(*array.Int64Builder).Append(int64(i))
		b.Field(2).(*array.Float64Builder).Append(float64(i) / 3)
		if c.Tag {
			b.Field(3).(*array.StringBuilder).Append(fmt.Sprintf("t%07d", i%10_000_000))
		}
	}
	return b.NewRecord()
}

// appendKey appends row id's key: null, 0 (skew) or uniform.
func (c ParquetConfig) appendKey(b array.Builder, rng *rand.Rand, id int64) {
	p, k := rng.Float64(), id
	switch {
	case p < c.Nulls:
		b.AppendNull()
		return
	case p < c.Nulls+c.Skew:
		k = 0
	case c.Cardinality > 0:
		k = rng.Int64N(c.Cardinality)
	}
	if i32, ok := b.(*array.Int32Builder); ok {
		i32.Append(int32(k))
	} else {
		b.(*array.Int64Builder).Append(k)
	}
}
