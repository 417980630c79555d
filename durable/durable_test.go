package durable

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSyncFiles syncs files in two directories, written with their
// write-back started; a missing file fails it, naming the file; a
// cancelled context stops it.
func TestSyncFiles(t *testing.T) {
	dirs := []string{t.TempDir(), filepath.Join(t.TempDir(), "sub")}
	if err := os.Mkdir(dirs[1], 0o755); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for i := range 10 {
		path := filepath.Join(dirs[i%2], "f"+string(rune('0'+i)))
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte(strings.Repeat("x", 1000*i))); err != nil {
			t.Fatal(err)
		}
		StartWriteback(f)
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	if err := SyncFiles(context.Background(), paths, 3); err != nil {
		t.Fatalf("SyncFiles: %v", err)
	}
	for i, path := range paths {
		if st, err := os.Stat(path); err != nil || st.Size() != int64(1000*i) {
			t.Errorf("%s after the sync: %v, %v", path, st, err)
		}
	}
	gone := filepath.Join(dirs[0], "gone")
	err := SyncFiles(context.Background(), append(paths, gone), 2)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), gone) {
		t.Errorf("SyncFiles with a missing file: %v, want an error naming %s", err, gone)
	}
	if err := SyncDir(gone); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("SyncDir of a missing directory: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := SyncFiles(ctx, paths, 2); !errors.Is(err, context.Canceled) {
		t.Errorf("SyncFiles on a cancelled context: %v", err)
	}
	if err := SyncFiles(context.Background(), nil, 2); err != nil {
		t.Errorf("SyncFiles of no files: %v", err)
	}
}
