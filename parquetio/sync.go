package parquetio

import (
	"context"
	"fmt"

	"github.com/shufflenode/shufflenode/durable"
)

// SyncFiles makes files committed under WriteConfig.DeferSync durable
// (durable.SyncFiles): each file, parallel at a time, then each of their
// directories once. The error wraps ErrWrite and names the path.
func SyncFiles(ctx context.Context, paths []string, parallel int) error {
	if err := durable.SyncFiles(ctx, paths, parallel); err != nil {
		return fmt.Errorf("%w: %w", ErrWrite, err)
	}
	return nil
}
