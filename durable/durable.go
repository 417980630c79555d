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

// SyncFiles makes the files at paths durable, with their names: it syncs
// each file, parallel at a time, then each of their directories once. A
// file written by another process on this machine, or on a shared file
// system whose writer closed it, is synced the same way. The first error is
// returned, naming its path.
func SyncFiles(ctx context.Context, paths []string, parallel int) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(max(parallel, 1))
	for _, path := range paths {
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return syncPath(path)
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	dirs := make([]string, 0, len(paths))
	for _, path := range paths {
		dirs = append(dirs, filepath.Dir(path))
	}
	slices.Sort(dirs)
	for _, dir := range slices.Compact(dirs) {
		if err := SyncDir(dir); err != nil {
			return err
		}
	}
	return nil
}

// SyncDir makes the entries of dir durable (a rename into it, a file
// created in it).
func SyncDir(dir string) error {
	return syncPath(dir)
}

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
