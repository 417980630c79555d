package job

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/internal/testkit"
	"github.com/shufflenode/shufflenode/parquetio"
)

// TestPartWriterSyncs: the nodes are asked to defer their syncs, and
// writeAll has synced every file written, by the nodes (here a stand-in
// that writes with the spec's config) or by this process, when it returns
// (these few files at its end): a file gone by then fails the job, naming
// it.
func TestPartWriterSyncs(t *testing.T) {
	rec := testkit.Int64Record(memory.DefaultAllocator, "x", 1, 2, 3)
	defer rec.Release()
	fill := func(write func(arrow.Record) error) error { return write(rec) }
	for _, lose := range []bool{false, true} {
		dir := t.TempDir()
		w, err := newPartWriter(context.Background(), ShuffleConfig{Output: dir, WriteOn: WriteAuto}, 4, rec.Schema(), parquetio.WriteConfig{})
		if err != nil {
			t.Fatal(err)
		}
		onNodes := func(ws flightproto.WriteSpec) (flightproto.OpStats, error) {
			if !ws.DeferSync {
				t.Errorf("%s: the node was not asked to defer its sync", ws.Path)
			}
			cfg := parquetio.WriteConfig{Compression: parquetio.Compression(ws.Compression), DeferSync: ws.DeferSync}
			rows, size, err := WritePartFile(ws.Path, rec.Schema(), cfg, fill)
			return flightproto.OpStats{Node: "n", OutputRows: rows, FileBytes: size}, err
		}
		here := func(write func(arrow.Record) error) (flightproto.OpStats, error) {
			return flightproto.OpStats{}, fill(write)
		}
		work := func(_ context.Context, part int) error {
			if part == 2 { // this process writes it
				w.why.Store(new(string))
			}
			if _, err := w.write(part, onNodes, here); err != nil {
				return err
			}
			if lose && part == 3 {
				return os.Remove(filepath.Join(dir, PartFile(part, 4)))
			}
			return nil
		}
		err = w.writeAll(context.Background(), 1, "write", func(string, int, int) {}, work)
		switch gone := PartFile(3, 4); {
		case lose && (!errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), gone)):
			t.Errorf("a file gone before the sync: %v, want an error naming %s", err, gone)
		case !lose && err != nil:
			t.Fatal(err)
		case !lose && (w.written != 4 || w.nodes.Load() != 2 || w.local.Load() != 2):
			t.Errorf("synced %d files (%d by the nodes, %d here), want 4 (2, 2)", w.written, w.nodes.Load(), w.local.Load())
		case !lose && !strings.HasPrefix(w.synced(), "4 files to disk"):
			t.Errorf("report %q does not say the 4 files were synced", w.synced())
		}
	}
}
