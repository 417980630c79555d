package zarr

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/shufflenode/shufflenode/durable"
	"github.com/shufflenode/shufflenode/rechunk"
)

// Array is one Zarr v2 array stored in a directory. Get one from Open or
// Create and Close it when done. ReadChunk and WriteChunk are safe for
// concurrent use (on different chunks; two writers of one chunk race, and
// the last rename wins).
type Array struct {
	dir       string
	meta      Meta
	grid      []int
	fill      []byte
	fullBytes int
	codec     *codec
	closed    atomic.Bool
	// deferSync is set by DeferSyncs; syncs syncs the chunk files written
	// since, in the background, and Sync waits for it.
	deferSync atomic.Bool
	mu        sync.Mutex
	syncs     *durable.Syncer
}

// Open opens the array stored in dir: it reads and validates dir/.zarray.
// The error wraps fs.ErrNotExist if there is no .zarray, or one of ErrMeta,
// ErrDType, ErrCompressor, ErrOrder, ErrFilters, ErrFillValue, ErrTooLarge.
func Open(dir string) (*Array, error) {
	data, err := readBounded(filepath.Join(dir, metaFile), maxMetaBytes)
	if err != nil {
		return nil, fmt.Errorf("zarr: store %s: %w", dir, err)
	}
	m, err := decodeMeta(data)
	if err != nil {
		return nil, fmt.Errorf("zarr: store %s: %s: %w", dir, metaFile, err)
	}
	return newArray(dir, m)
}

// Create makes a new array in dir (created if missing, refused with
// ErrExists if not empty) and writes its .zarray atomically. Create copies
// m; no chunk file is written, so every chunk reads as the fill value until
// it is written.
func Create(dir string, m Meta) (*Array, error) {
	m = m.normalized()
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("zarr: store %s: %w", dir, err)
	}
	data, err := encodeMeta(m)
	if err == nil {
		err = ensureEmptyDir(dir)
	}
	if err == nil {
		err = writeAtomic(filepath.Join(dir, metaFile), data, true)
	}
	if err != nil {
		return nil, fmt.Errorf("zarr: store %s: %w", dir, err)
	}
	return newArray(dir, m)
}

// newArray returns the Array of a normalized, valid m.
func newArray(dir string, m Meta) (*Array, error) {
	fill, err := FillBytes(m.DType, m.FillValue)
	if err != nil {
		return nil, fmt.Errorf("zarr: store %s: %w", dir, err)
	}
	n, _ := rechunk.NumBytes(m.DType, m.Chunks) // checked by Validate
	c, err := newCodec(m.Compressor)
	if err != nil {
		return nil, fmt.Errorf("zarr: store %s: %w", dir, err)
	}
	return &Array{dir: dir, meta: m, grid: gridOf(m.Shape, m.Chunks), fill: fill, fullBytes: n, codec: c}, nil
}

// Close releases the array's compressor state. It is idempotent; call it
// once no ReadChunk or WriteChunk is running. Later calls give ErrClosed.
func (a *Array) Close() error {
	if !a.closed.Swap(true) {
		a.codec.close()
	}
	return nil
}

// DeferSyncs makes WriteChunk leave each chunk's file unsynced, its
// write-back started, and sync it in the background with the next chunks
// written (durable.Syncer), until Sync makes every chunk written since
// durable: a rechunk writes a file per chunk, and a sync each cost the
// 1000-chunk rechunk of docs/benchmarks.md a fifth of its run; syncing every file
// after the last left the machine idle for 0.3-1.1 s of it. A chunk still
// appears whole or not at all; only a crash of the machine before Sync can
// leave it empty or short. The background syncs stop when ctx ends.
func (a *Array) DeferSyncs(ctx context.Context) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.syncs == nil {
		a.syncs = durable.NewSyncer(ctx, durable.Batch, durable.Parallel)
	}
	a.deferSync.Store(true)
}

// Sync makes the chunks written since DeferSyncs (or the last Sync)
// durable: their files, then their directories. The error names the store
// and the file.
func (a *Array) Sync(ctx context.Context) error {
	a.mu.Lock()
	s := a.syncs
	a.mu.Unlock()
	if s == nil {
		return nil
	}
	if err := s.Wait(ctx); err != nil {
		return fmt.Errorf("zarr: store %s: %w", a.dir, err)
	}
	return nil
}

// Dir returns the store's directory.
func (a *Array) Dir() string { return a.dir }

// Meta returns a copy of the array's metadata (Separator filled in).
func (a *Array) Meta() Meta { return a.meta.normalized() }

// Grid returns the number of chunks along each axis (empty for a
// zero-dimensional array, which has one chunk; 0 along an axis of size 0,
// which has none). The caller owns the slice.
func (a *Array) Grid() []int { return slices.Clone(a.grid) }

// ChunkSizes returns, per axis, the sizes of the chunks trimmed to the
// array: shape 25 with chunks 10 gives [10 10 5]. This is the form
// splitaxes.New takes. The caller owns the slices.
func (a *Array) ChunkSizes() [][]int64 {
	out := make([][]int64, len(a.grid))
	for d, g := range a.grid {
		out[d] = make([]int64, g)
		for i := range g {
			out[d][i] = a.sizeAlong(d, i)
		}
	}
	return out
}

// sizeAlong returns the trimmed size of chunk i along axis d.
func (a *Array) sizeAlong(d, i int) int64 {
	start := int64(i) * a.meta.Chunks[d]
	return min(a.meta.Chunks[d], a.meta.Shape[d]-start)
}

// ChunkShape returns the shape of chunk idx trimmed to the array's bounds.
// The error wraps ErrIndex.
func (a *Array) ChunkShape(idx []int) ([]int64, error) {
	if len(idx) != len(a.grid) {
		return nil, a.errf(idx, "%d axes, want %d: %w", len(idx), len(a.grid), ErrIndex)
	}
	shape := make([]int64, len(idx))
	for d, i := range idx {
		if i < 0 || i >= a.grid[d] {
			return nil, a.errf(idx, "grid %v: %w", a.grid, ErrIndex)
		}
		shape[d] = a.sizeAlong(d, i)
	}
	return shape, nil
}

// errf returns an error naming the store and chunk idx.
func (a *Array) errf(idx []int, format string, args ...any) error {
	return fmt.Errorf("zarr: store %s chunk %v: "+format, append([]any{a.dir, idx}, args...)...)
}

// chunkPath returns the file of chunk idx.
func (a *Array) chunkPath(idx []int) string {
	return filepath.Join(a.dir, filepath.FromSlash(chunkKey(idx, a.meta.Separator)))
}
