package parquetio

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestDeferSync: files committed under DeferSync are in place whole (no
// temporary file left) and read back equal; SyncFiles syncs them, in two
// directories; a file that is not there fails SyncFiles, naming it; a
// cancelled context stops it.
func TestDeferSync(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := allTypes()
	rec := genRecord(mem, schema, 500, 9)
	defer rec.Release()
	dirs := []string{t.TempDir(), t.TempDir()}
	var paths []string
	for i := range 6 {
		path := filepath.Join(dirs[i%2], "part-"+string(rune('a'+i))+".parquet")
		writeWith(t, path, schema, []arrow.Record{rec}, WriteConfig{DeferSync: true})
		paths = append(paths, path)
	}
	for _, dir := range dirs {
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), ".") {
				t.Errorf("%s: temporary file %s left after Commit", dir, e.Name())
			}
		}
	}
	for _, path := range paths {
		out, err := ReadFile(context.Background(), path, mem, 0)
		if err != nil {
			t.Fatal(err)
		}
		got := concatAll(t, mem, schema, out)
		if !array.RecordEqual(rec, got) {
			t.Errorf("%s: rows differ after a deferred sync", path)
		}
		got.Release()
		releaseRecs(out)
	}
	if err := SyncFiles(context.Background(), paths, 3); err != nil {
		t.Fatalf("SyncFiles: %v", err)
	}
	gone := filepath.Join(dirs[1], "gone.parquet")
	err := SyncFiles(context.Background(), append(paths, gone), 2)
	if !errors.Is(err, ErrWrite) || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), gone) {
		t.Errorf("SyncFiles with a missing file: %v, want ErrWrite naming %s", err, gone)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := SyncFiles(ctx, paths, 2); !errors.Is(err, context.Canceled) {
		t.Errorf("SyncFiles on a cancelled context: %v", err)
	}
}
