package parquetio

import (
	"fmt"

	"github.com/apache/arrow-go/v18/parquet/compress"
)

// Compression names the codec of written column chunks.
type Compression string

// The compressions a Writer can use. Snappy, Zstd and Uncompressed apply to
// every column. Auto chooses per column from the first record with rows
// written (see planColumns): no dictionary for a column whose sampled
// values are nearly all distinct; DELTA_BINARY_PACKED, uncompressed, for an
// int32 or int64 column without a dictionary where that beats snappy on the
// sample (but a nullable one in a file Arrow's writer writes, see
// noNullableDelta); else Snappy where snappy shrinks a sample of the column's values
// (about 16 KiB, laid out as in a Parquet page: strings and binaries each
// after its 4-byte length) to at most 7/8 of its size, else Uncompressed,
// like a file system's early abort; incompressible columns (random floats,
// random 64-bit ids) then cost no snappy time. A file committed without rows
// uses Snappy.
const (
	Auto         Compression = "auto"
	Snappy       Compression = "snappy"
	Zstd         Compression = "zstd"
	Uncompressed Compression = "none"
)

// WriteConfig configures a Writer. The zero value is the default.
type WriteConfig struct {
	// Compression of column chunks: Auto (default), Snappy, Zstd or
	// Uncompressed.
	Compression Compression
	// RowGroupRows is the most rows in one row group (default 1 Mi). A row
	// group is buffered (encoded and compressed) in memory until it is full.
	RowGroupRows int64
	// NoDictionary turns dictionary encoding off. It is on by default, as in
	// other Parquet writers: it shrinks columns with few distinct values but
	// costs time on columns with many (it falls back to plain encoding once a
	// column chunk's dictionary passes 1 MiB).
	NoDictionary bool
	// DeferSync leaves the file's durability to the caller. Commit renames
	// the temporary file into place without syncing the file or its
	// directory, having started the file's write-back (so that a later sync
	// mostly finds it written). The caller makes it durable with SyncFiles,
	// for all the files of a job at once, before it reports them written:
	// two syncs a file cost a 1000-partition set-index a fifth of its
	// writing time on this project's machine. The file still appears whole
	// or not at all to readers; only a crash of the machine before the
	// caller's sync can leave it empty or short.
	DeferSync bool
	// PlanKey, under Auto, lets the Writers of one output share their
	// choices: the files of one job's partitions, given the same key (the
	// job and the directory, say), hold rows of the same kind, and sampling
	// each file's first record to choose again cost a 1000-partition merge
	// 5% of its CPU. A Writer with a key takes the plan of the last one that
	// sampled a first record of 2048 rows or more for the same key and
	// schema in Plans; every 32nd samples again. Empty, or without Plans:
	// every file samples its own.
	PlanKey string
	// Plans holds the plans shared under PlanKey: its owner (a node's API
	// server, a client's job) decides which Writers share. Nil: PlanKey
	// has no effect and every file samples its own.
	Plans *PlanCache

	// arrowWriter turns this package's writer of simple files off, so that
	// Arrow's writes every file (tests compare the two).
	arrowWriter bool
	// arrowNullableDelta lets Arrow's writer write nullable delta columns
	// (tests compare it with this package's on files it does not fail on).
	arrowNullableDelta bool
}

// DefaultWriteConfig returns the default configuration: Auto, row groups of
// at most 1 Mi rows.
func DefaultWriteConfig() WriteConfig {
	return WriteConfig{Compression: Auto, RowGroupRows: 1 << 20}
}

// withDefaults fills zero fields with their defaults.
func (c WriteConfig) withDefaults() WriteConfig {
	d := DefaultWriteConfig()
	if c.Compression == "" {
		c.Compression = d.Compression
	}
	if c.RowGroupRows == 0 {
		c.RowGroupRows = d.RowGroupRows
	}
	return c
}

// Validate checks the configuration.
func (c WriteConfig) Validate() error {
	c = c.withDefaults()
	if _, err := c.Compression.codec(); err != nil {
		return err
	}
	if c.RowGroupRows < 0 {
		return fmt.Errorf("parquetio: RowGroupRows %d: want > 0", c.RowGroupRows)
	}
	return nil
}

// codec maps c to the Parquet codec (Auto to Snappy, its choice for a file
// without rows).
func (c Compression) codec() (compress.Compression, error) {
	switch c {
	case Auto, Snappy:
		return compress.Codecs.Snappy, nil
	case Zstd:
		return compress.Codecs.Zstd, nil
	case Uncompressed:
		return compress.Codecs.Uncompressed, nil
	}
	return 0, fmt.Errorf("parquetio: compression %q: want auto, snappy, zstd or none", c)
}
