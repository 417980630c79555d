package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/durable"
	"github.com/shufflenode/shufflenode/job"
	"github.com/shufflenode/shufflenode/parquetio"
	"github.com/shufflenode/shufflenode/synth"
	"github.com/shufflenode/shufflenode/table"
)

// The Parquet ceilings bound the jobs that read and write Parquet (merge,
// set-index): what one goroutine encodes and decodes per second of rows
// like theirs: key uniform in [0, 2^40) and sorted (as set-index leaves it;
// merge's hash order costs more: the ceiling stays a bound), id a random
// row number (rows come in shuffled order), val id/3, tag "t" and 7 digits
// of id, as gen-parquet's columns. They are written as the jobs write
// their partitions (compression auto, no dictionary, renamed into place and
// all synced at the end), in files of pqCeilingFileRows rows, then read
// back.

// pqCeilingFileRows is the rows of each file: a partition of the bench's
// set-index at --quick 16 (16M rows over 1000 partitions).
const pqCeilingFileRows = 16_000

// ParquetCeilings writes about bytes (Arrow bytes) of such rows to Parquet
// files under a new directory in dir with one goroutine, reads them back
// with one goroutine, and returns both as ceilings.
func ParquetCeilings(ctx context.Context, dir string, bytes int64) (write, read Ceiling, err error) {
	tmp, err := os.MkdirTemp(dir, "shufflenode-bench-parquet-")
	if err != nil {
		return write, read, err
	}
	defer os.RemoveAll(tmp)
	rec := ceilingRows(pqCeilingFileRows, 5)
	defer rec.Release()
	size := table.RecordBytes(rec)
	files := int(max(1, (bytes+size-1)/size))
	cfg := parquetio.WriteConfig{Compression: parquetio.Auto, NoDictionary: true, DeferSync: true}
	start := time.Now()
	paths := make([]string, files)
	for f := range files {
		fill := func(write func(arrow.Record) error) error { return write(rec) }
		paths[f] = ceilingFile(tmp, f)
		if _, _, err := job.WritePartFile(paths[f], rec.Schema(), cfg, fill); err != nil {
			return write, read, fmt.Errorf("job: parquet ceiling: %w", err)
		}
	}
	if err := parquetio.SyncFiles(ctx, paths, durable.Parallel); err != nil {
		return write, read, fmt.Errorf("job: parquet ceiling: %w", err)
	}
	write = Ceiling{Name: "Parquet: write, auto, 1 goroutine", Bytes: int64(files) * size, Seconds: time.Since(start).Seconds()}
	start = time.Now()
	for f := range files {
		recs, err := parquetio.ReadFile(ctx, ceilingFile(tmp, f), memory.DefaultAllocator, parquetio.DefaultBatchRows)
		if err != nil {
			return write, read, fmt.Errorf("job: parquet ceiling: %w", err)
		}
		rows := countRows(recs)
		for _, r := range recs {
			r.Release()
		}
		if rows != rec.NumRows() {
			return write, read, fmt.Errorf("job: parquet ceiling: file %d read back %d rows of %d", f, rows, rec.NumRows())
		}
	}
	read = Ceiling{Name: "Parquet: read, 1 goroutine", Bytes: write.Bytes, Seconds: time.Since(start).Seconds()}
	return write, read, nil
}

func countRows(recs []arrow.Record) (n int64) {
	for _, r := range recs {
		n += r.NumRows()
	}
	return n
}

func ceilingFile(dir string, f int) string {
	return filepath.Join(dir, fmt.Sprintf("part-%05d.parquet", f))
}

// ParquetBound is the rate at which cores goroutines could only decode
// rows from Parquet and encode them again (read and write, each measured
// on one goroutine): no job that does both can be faster.
func ParquetBound(write, read Ceiling, cores int) Ceiling {
	return Ceiling{Name: fmt.Sprintf("Parquet: read+write, all %d cores (derived)", cores),
		Bytes: write.Bytes, Seconds: (write.Seconds + read.Seconds) / float64(cores)}
}

// ceilingRows builds n rows of the ceilings' columns (see above).
func ceilingRows(n int, seed uint64) arrow.Record {
	rng := rand.New(rand.NewPCG(seed, uint64(n)))
	schema := synth.ParquetConfig{KeyType: "int64", Tag: true}.Schema()
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	keys := make([]int64, n)
	for i := range keys {
		keys[i] = rng.Int64N(1 << 40)
	}
	slices.Sort(keys)
	tag := make([]byte, 0, 9)
	for _, k := range keys {
		id := rng.Int64N(1 << 30)
		b.Field(0).(*array.Int64Builder).Append(k)
		b.Field(1).(*array.Int64Builder).Append(id)
		b.Field(2).(*array.Float64Builder).Append(float64(id) / 3)
		tag = strconv.AppendInt(append(tag[:0], 't'), 10_000_000+id%10_000_000, 10)
		tag = append(tag[:1], tag[2:]...) // "t" and 7 digits
		b.Field(3).(*array.StringBuilder).BinaryBuilder.Append(tag)
	}
	return b.NewRecord()
}
