package zarr

import (
	"errors"
	"fmt"

	"github.com/shufflenode/shufflenode/rechunk"
)

// Sentinel errors. Errors returned by an Array name the store's directory and,
// where one is concerned, the chunk index; match them with errors.Is.
var (
	// ErrMeta means a .zarray document is malformed or describes an array
	// that is not valid Zarr v2 (bad JSON, zarr_format other than 2, shape and
	// chunks of different lengths, a chunk size below 1, an unknown
	// dimension_separator, ...).
	ErrMeta = errors.New("zarr: invalid array metadata")
	// ErrDType means the dtype is not one this package supports (see
	// rechunk.ParseDType); such errors also wrap rechunk.ErrDType.
	ErrDType = errors.New("zarr: unsupported dtype")
	// ErrCompressor means the compressor is not null, zlib or zstd, or its
	// level is out of range. The error names the compressor's id.
	ErrCompressor = errors.New("zarr: unsupported compressor")
	// ErrOrder means the memory order is not "C" (Fortran order is refused).
	ErrOrder = errors.New("zarr: unsupported memory order")
	// ErrFilters means the array has filters; only null (or []) is supported.
	ErrFilters = errors.New("zarr: unsupported filters")
	// ErrFillValue means a fill value cannot be represented in the dtype.
	ErrFillValue = errors.New("zarr: invalid fill value")
	// ErrTooLarge means a chunk's byte size exceeds MaxChunkBytes or an axis
	// has more than MaxChunksPerAxis chunks.
	ErrTooLarge = errors.New("zarr: array too large")
	// ErrExists means Create was given a directory that is not empty.
	ErrExists = errors.New("zarr: store exists and is not empty")
	// ErrIndex means a chunk index has the wrong number of axes or is out of
	// the chunk grid.
	ErrIndex = errors.New("zarr: chunk index out of range")
	// ErrChunk means a chunk passed to WriteChunk has the wrong dtype or
	// shape, or a byte count that does not match its shape.
	ErrChunk = errors.New("zarr: chunk does not fit the array")
	// ErrCorrupt means a chunk file cannot be decoded: it does not decompress,
	// or its decoded size is not the full chunk's byte size.
	ErrCorrupt = errors.New("zarr: corrupt chunk")
	// ErrClosed means the Array was used after Close.
	ErrClosed = errors.New("zarr: array closed")
)

// chunkErr describes a chunk that does not fit: its dtype and shape against
// the wanted ones, wrapping ErrChunk and any cause.
func chunkErr(c rechunk.Chunk, dt rechunk.DType, shape []int64, cause error) error {
	err := fmt.Errorf("chunk %s%v with %d bytes, want %s%v: %w", c.DType, c.Shape, len(c.Data), dt, shape, ErrChunk)
	if cause != nil {
		return fmt.Errorf("%w: %w", err, cause)
	}
	return err
}
