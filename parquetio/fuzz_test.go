package parquetio

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// FuzzReadFile: a Parquet file of any bytes is read or refused with an
// error, never a panic (input files come from users' disks). The seeds are
// small files as this package writes them: auto (dictionary, delta, snappy
// and plain columns), without dictionaries, zstd, and simple columns (its
// own pages: delta, dictionaries, definition levels).
func FuzzReadFile(f *testing.F) {
	dir := f.TempDir()
	for i, cfg := range []WriteConfig{{}, {NoDictionary: true}, {Compression: Zstd}} {
		rec := autoRecord(memory.DefaultAllocator, 200, uint64(i), false)
		path := filepath.Join(dir, "seed.parquet")
		if err := WriteFile(path, autoSchema(), []arrow.Record{rec}); cfg != (WriteConfig{}) {
			w, cerr := Create(path, autoSchema(), cfg)
			if cerr != nil {
				f.Fatal(cerr)
			}
			if err = w.Write(rec); err == nil {
				err = w.Commit()
			}
		} else if err != nil {
			f.Fatal(err)
		}
		rec.Release()
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	// and a file of simple columns, nullable and not, dictionary-encoded
	// (but the delta-encoded integers), as the flat writer writes them
	c := flatCase{ints: "runs", nulls: 3, recRows: []int{150}, dict: true, delta: true, codec: Snappy}
	recs := flatRecords(c)
	path := filepath.Join(dir, "flat.parquet")
	writeFlatCase(f, path, c, recs, true)
	releaseRecs(recs)
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "f.parquet")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		recs, err := ReadFile(context.Background(), path, memory.DefaultAllocator, 64)
		if err == nil {
			releaseRecs(recs)
		}
	})
}
