package zarr

import (
	"context"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shufflenode/shufflenode/rechunk"
)

// TestDeferSyncs: with syncs deferred, the chunks (in nested directories,
// "/" separator) read back whole before and after Sync, no temporary file
// is left, and a chunk file gone before Sync fails it, naming the store and
// the file; a second Sync has nothing left to sync.
func TestDeferSyncs(t *testing.T) {
	for _, lose := range []bool{false, true} {
		dir := filepath.Join(t.TempDir(), "a.zarr")
		m := Meta{Shape: []int64{7, 9}, Chunks: []int64{3, 4}, DType: mustDType(t, "<i4"), Separator: "/"}
		a, err := Create(dir, m)
		if err != nil {
			t.Fatal(err)
		}
		a.DeferSyncs(context.Background())
		n, _ := rechunk.NumBytes(m.DType, m.Shape)
		whole := rechunk.Chunk{DType: m.DType, Shape: m.Shape, Data: randomBytes(rand.New(rand.NewPCG(5, 1)), n)}
		writeAll(t, a, whole)
		checkAll(t, a, whole)
		if err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && strings.Contains(d.Name(), ".tmp-") {
				t.Errorf("temporary file %s left", path)
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		gone := a.chunkPath([]int{2, 1})
		if lose {
			if err := os.Remove(gone); err != nil {
				t.Fatal(err)
			}
		}
		err = a.Sync(context.Background())
		switch {
		case lose && (!errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), gone) || !strings.Contains(err.Error(), dir)):
			t.Errorf("Sync with a chunk file gone: %v, want an error naming %s and %s", err, dir, gone)
		case !lose && err != nil:
			t.Fatalf("Sync: %v", err)
		case !lose:
			checkAll(t, a, whole)
		}
		if err := a.Sync(context.Background()); err != nil {
			t.Errorf("a second Sync: %v", err)
		}
		a.Close()
	}
}
