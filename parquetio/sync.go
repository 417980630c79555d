package parquetio

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sync/errgroup"
)

// SyncFiles makes files committed under WriteConfig.DeferSync durable:
// it syncs each file, parallel at a time, then each of their directories
// once (their renames). A file written by another process on this
// machine, or on a shared file system whose writer closed it, is synced
// the same way. The first error is returned, naming its path.
func SyncFiles(ctx context.Context, paths []string, parallel int) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(max(parallel, 1))
	for _, path := range paths {
		g.Go(func() error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return syncFile(path)
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	dirs := make([]string, 0, 1)
	for _, path := range paths {
		dirs = append(dirs, filepath.Dir(path))
	}
	slices.Sort(dirs)
	for _, dir := range slices.Compact(dirs) {
		if err := syncDir(dir); err != nil {
			return err
		}
	}
	return nil
}

// syncFile syncs the file at path.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("%w: sync %s: %w", ErrWrite, path, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("%w: sync %s: %w", ErrWrite, path, err)
	}
	return nil
}
