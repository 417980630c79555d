package durable

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sync/errgroup"
)

// Parallel is how many files SyncFiles callers usually sync at once: a
// file system commits concurrent syncs together.
const Parallel = 32

// Batch is how many files a Syncer's callers usually let it gather before
// it syncs them in the background.
const Batch = 64

// SyncFiles makes the files at paths durable, with their names: it syncs
// each file, parallel at a time, then each of their directories once. A
// file written by another process on this machine, or on a shared file
// system whose writer closed it, is synced the same way. The first error is
// returned, naming its path.
func SyncFiles(ctx context.Context, paths []string, parallel int) error {
	if err := syncEach(ctx, paths, parallel); err != nil {
		return err
	}
	return syncDirs(dirsOf(paths))
}

// syncEach syncs the files at paths, parallel at a time.
func syncEach(ctx context.Context, paths []string, parallel int) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(max(parallel, 1))
	for _, path := range paths {
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return syncOne(path)
		})
	}
	return g.Wait()
}

// dirsOf returns the directories of paths, sorted, each once.
func dirsOf(paths []string) []string {
	dirs := make([]string, 0, len(paths))
	for _, path := range paths {
		dirs = append(dirs, filepath.Dir(path))
	}
	slices.Sort(dirs)
	return slices.Compact(dirs)
}

// syncDirs syncs each of dirs.
func syncDirs(dirs []string) error {
	for _, dir := range dirs {
		if err := SyncDir(dir); err != nil {
			return err
		}
	}
	return nil
}

// SyncDir makes the entries of dir durable (a rename into it, a file
// created in it).
func SyncDir(dir string) error {
	return syncOne(dir)
}

// syncOne syncs one file or directory: syncPath, but for tests that
// watch which paths are synced.
var syncOne = syncPath

// syncPath syncs the file or directory at path.
func syncPath(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return nil
}
