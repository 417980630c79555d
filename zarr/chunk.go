package zarr

import (
	"slices"

	"github.com/shufflenode/shufflenode/rechunk"
)

// ReadChunk returns chunk idx trimmed to the array's bounds: its shape is
// ChunkShape(idx) and its bytes are C order in the array's dtype. A missing
// chunk file reads as the fill value. The caller owns the chunk. The error
// names the store and chunk and wraps ErrIndex, ErrCorrupt, ErrClosed or an
// I/O error.
func (a *Array) ReadChunk(idx []int) (rechunk.Chunk, error) {
	shape, err := a.ChunkShape(idx)
	if err != nil {
		return rechunk.Chunk{}, err
	}
	if a.closed.Load() {
		return rechunk.Chunk{}, a.errf(idx, "%w", ErrClosed)
	}
	n, _ := rechunk.NumBytes(a.meta.DType, shape) // <= fullBytes
	stored, err := readBounded(a.chunkPath(idx), a.codec.maxEncoded(a.fullBytes))
	if isNotExist(err) {
		data := make([]byte, n)
		tile(data, a.fill)
		return rechunk.Chunk{DType: a.meta.DType, Shape: shape, Data: data}, nil
	}
	if err != nil {
		return rechunk.Chunk{}, a.errf(idx, "%w", err)
	}
	full, err := a.codec.decode(stored, a.fullBytes)
	if err != nil {
		return rechunk.Chunk{}, a.errf(idx, "%w", err)
	}
	data := trimTo(full, a.meta.Chunks, shape, a.meta.DType.ItemSize(), n)
	return rechunk.Chunk{DType: a.meta.DType, Shape: shape, Data: data}, nil
}

// WriteChunk stores chunk idx: c must have the array's dtype and the
// trimmed shape ChunkShape(idx). It pads c to the full chunk shape with the
// fill value, compresses it and writes it atomically (a temporary file,
// synced unless DeferSyncs, renamed over the chunk's file). WriteChunk does
// not keep c. The error names the store and chunk and wraps ErrIndex,
// ErrChunk, ErrClosed or an I/O error.
func (a *Array) WriteChunk(idx []int, c rechunk.Chunk) error {
	shape, err := a.ChunkShape(idx)
	if err != nil {
		return err
	}
	if a.closed.Load() {
		return a.errf(idx, "%w", ErrClosed)
	}
	if err := a.checkChunk(c, shape); err != nil {
		return a.errf(idx, "%w", err)
	}
	full := pad(c.Data, a.meta.Chunks, shape, a.fill, a.fullBytes)
	stored, err := a.codec.encode(full)
	deferred := a.deferSync.Load()
	path := a.chunkPath(idx)
	if err == nil {
		err = writeAtomic(path, stored, !deferred)
	}
	if err != nil {
		return a.errf(idx, "%w", err)
	}
	if deferred {
		a.mu.Lock()
		s := a.syncs
		a.mu.Unlock()
		s.Add(path)
	}
	return nil
}

// checkChunk checks c's dtype, shape and byte count against shape.
func (a *Array) checkChunk(c rechunk.Chunk, shape []int64) error {
	if c.DType != a.meta.DType || !slices.Equal(c.Shape, shape) {
		return chunkErr(c, a.meta.DType, shape, nil)
	}
	if err := c.Validate(); err != nil {
		return chunkErr(c, a.meta.DType, shape, err)
	}
	return nil
}
