package parquetio

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestWritersShareBuffers: writers running at once, file after file, take
// their page buffers from the one pool (codecMem) and give them back; every
// file must still read back as written. A buffer handed to a second writer
// while the first still used it would show as a differing or unreadable
// file. The files are large enough (thousands of rows of every type) for
// the pages to come from the pool, and cover each compression, dictionary
// on and off, and several row groups per file.
func TestWritersShareBuffers(t *testing.T) {
	poisonFreed(t)
	cfgs := []WriteConfig{{}, {NoDictionary: true}, {Compression: Snappy}, {Compression: Uncompressed},
		{Compression: Zstd}, {RowGroupRows: 3000, NoDictionary: true}}
	schema, dir := allTypes(), t.TempDir()
	const writers, files = 4, 6
	type written struct {
		path string
		rec  arrow.Record
	}
	out := make([][]written, writers)
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for f := range files {
				rec := genRecord(memory.DefaultAllocator, schema, 4000+3000*((g+f)%4), uint64(100*g+f))
				path := filepath.Join(dir, fmt.Sprintf("w%d-f%d.parquet", g, f))
				out[g] = append(out[g], written{path, rec})
				if err := writeOne(path, rec, cfgs[(g+f)%len(cfgs)]); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	for _, ws := range out {
		for _, w := range ws {
			checkFile(t, w.path, schema, w.rec)
			w.rec.Release()
		}
	}
}

// poisonFreed makes codecMem, for the test, overwrite every buffer freed to
// it before pooling it: bytes used after they were freed then differ at
// once, not only when another user happens to take the buffer first.
func poisonFreed(t *testing.T) {
	prev := codecMem
	codecMem = poisonAlloc{prev}
	t.Cleanup(func() { codecMem = prev })
}

// writeOne writes rec to path with cfg.
func writeOne(path string, rec arrow.Record, cfg WriteConfig) error {
	w, err := Create(path, rec.Schema(), cfg)
	if err != nil {
		return err
	}
	if err := w.Write(rec); err != nil {
		w.Abort()
		return err
	}
	return w.Commit()
}

// checkFile reads path back and compares it with want.
func checkFile(t *testing.T, path string, schema *arrow.Schema, want arrow.Record) {
	t.Helper()
	recs, err := ReadFile(context.Background(), path, nil, 0)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer releaseRecs(recs)
	got := concatAll(t, memory.DefaultAllocator, schema, recs)
	defer got.Release()
	if !array.RecordEqual(want, got) {
		t.Fatalf("%s: the file does not hold the rows written", path)
	}
}
