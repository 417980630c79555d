package main

// The gen-parquet command: synthetic Parquet inputs for merge, set-index and
// shuffle examples and benchmarks.

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/shufflenode/shufflenode/parquetio"
)

// genParquetConfig describes a generated table: rows split evenly over files
// gen-000.parquet ..., columns key (keyType), id (int64, 0..rows-1 in file
// order), val (float64, id/3) and, with tag, tag (string "t" + 7 digits).
type genParquetConfig struct {
	dir         string
	rows, files int
	keyType     string  // int64 or int32
	cardinality int64   // keys uniform in [0, cardinality); 0: key = id (unique)
	skew, nulls float64 // fractions of rows whose key is 0, or null
	tag         bool
	seed        uint64
}

func (c *genParquetConfig) register(fs *flag.FlagSet) {
	fs.StringVar(&c.dir, "output", "", "directory for the files gen-000.parquet ...")
	fs.IntVar(&c.rows, "rows", 1_000_000, "rows in all")
	fs.IntVar(&c.files, "files", 8, "files (the rows are split evenly)")
	fs.StringVar(&c.keyType, "key-type", "int64", "type of the key column: int64 or int32")
	fs.Int64Var(&c.cardinality, "keys", 0, "keys are uniform in [0, keys); 0 makes key = id (unique)")
	fs.Float64Var(&c.skew, "skew", 0, "fraction of rows whose key is 0 (a skewed key)")
	fs.Float64Var(&c.nulls, "nulls", 0, "fraction of rows whose key is null")
	fs.BoolVar(&c.tag, "tag", false, "add a string column tag")
	fs.Uint64Var(&c.seed, "seed", 1, "random seed")
}

func (c genParquetConfig) validate() error {
	switch {
	case c.dir == "":
		return errors.New("--output is required (a directory)")
	case c.rows < 0 || c.files < 1:
		return errors.New("--rows must be >= 0 and --files >= 1")
	case c.keyType != "int64" && c.keyType != "int32":
		return fmt.Errorf("--key-type %q: want int64 or int32", c.keyType)
	case c.skew < 0 || c.nulls < 0 || c.skew+c.nulls > 1:
		return errors.New("--skew and --nulls are fractions whose sum is at most 1")
	case c.keyType == "int32" && (c.cardinality > 1<<31 || c.cardinality == 0 && c.rows > 1<<31):
		return errors.New("int32 keys need --keys (or --rows) below 2^31")
	}
	return nil
}

func cmdGenParquet(args []string, stdout, stderr io.Writer) int {
	var c genParquetConfig
	fs := newFlags("gen-parquet", stderr)
	c.register(fs)
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if err := c.validate(); err != nil {
		return jobFail(stderr, "gen-parquet", 2, err)
	}
	if err := genParquet(c); err != nil {
		return jobFail(stderr, "gen-parquet", 1, err)
	}
	fmt.Fprintf(stdout, "wrote %d rows in %d files to %s\n", c.rows, c.files, c.dir)
	return 0
}

// genParquet writes the files.
func genParquet(c genParquetConfig) error {
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return err
	}
	schema := c.schema()
	rng := rand.New(rand.NewPCG(c.seed, uint64(c.rows)))
	for f := range c.files {
		rec := c.file(schema, rng, f)
		err := parquetio.WriteFile(filepath.Join(c.dir, fmt.Sprintf("gen-%03d.parquet", f)), schema, []arrow.Record{rec})
		rec.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

func (c genParquetConfig) schema() *arrow.Schema {
	key := arrow.DataType(arrow.PrimitiveTypes.Int64)
	if c.keyType == "int32" {
		key = arrow.PrimitiveTypes.Int32
	}
	fields := []arrow.Field{{Name: "key", Type: key, Nullable: c.nulls > 0}, {Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "val", Type: arrow.PrimitiveTypes.Float64}}
	if c.tag {
		fields = append(fields, arrow.Field{Name: "tag", Type: arrow.BinaryTypes.String})
	}
	return arrow.NewSchema(fields, nil)
}

// file builds the record of file f.
func (c genParquetConfig) file(schema *arrow.Schema, rng *rand.Rand, f int) arrow.Record {
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := f * c.rows / c.files; i < (f+1)*c.rows/c.files; i++ {
		c.appendKey(b.Field(0), rng, int64(i))
		b.Field(1).(*array.Int64Builder).Append(int64(i))
		b.Field(2).(*array.Float64Builder).Append(float64(i) / 3)
		if c.tag {
			b.Field(3).(*array.StringBuilder).Append(fmt.Sprintf("t%07d", i%10_000_000))
		}
	}
	return b.NewRecord()
}

// appendKey appends row id's key: null, 0 (skew) or uniform.
func (c genParquetConfig) appendKey(b array.Builder, rng *rand.Rand, id int64) {
	p, k := rng.Float64(), id
	switch {
	case p < c.nulls:
		b.AppendNull()
		return
	case p < c.nulls+c.skew:
		k = 0
	case c.cardinality > 0:
		k = rng.Int64N(c.cardinality)
	}
	if i32, ok := b.(*array.Int32Builder); ok {
		i32.Append(int32(k))
	} else {
		b.(*array.Int64Builder).Append(k)
	}
}
