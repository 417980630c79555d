package zarr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/shufflenode/shufflenode/rechunk"
)

// MaxChunkBytes bounds the byte size of one full (padded) chunk. Validate
// refuses larger chunks, so a hostile .zarray cannot make ReadChunk allocate
// without bound.
const MaxChunkBytes = 1 << 31

// MaxChunksPerAxis bounds the number of chunks along one axis, so Grid and
// ChunkSizes stay small whatever a .zarray says.
const MaxChunksPerAxis = 1 << 24

// Compressor ids this package reads and writes.
const (
	// CompressorZlib is numcodecs' "zlib": a zlib (RFC 1950) stream.
	CompressorZlib = "zlib"
	// CompressorZstd is numcodecs' "zstd": one or more Zstandard frames.
	CompressorZstd = "zstd"
)

// Dimension separators of chunk keys.
const (
	// SeparatorDot names chunks "i.j.k" in the store's directory (default).
	SeparatorDot = "."
	// SeparatorSlash names chunks "i/j/k", nested directories.
	SeparatorSlash = "/"
)

// Compressor is the compressor of every chunk of an array. A nil *Compressor
// means chunks are stored raw.
type Compressor struct {
	// ID is CompressorZlib or CompressorZstd.
	ID string
	// Level is the compression level: -1..9 for zlib, -131072..22 for zstd
	// (mapped to the nearest klauspost/compress encoder level). Readers
	// ignore it.
	Level int
}

// Meta is the part of a .zarray document this package supports: a C-order,
// filter-free array of a fixed-size numeric dtype.
type Meta struct {
	// Shape is the array's size along each axis (empty: a zero-dimensional
	// array). Sizes are >= 0.
	Shape []int64
	// Chunks is the full chunk shape, one size >= 1 per axis of Shape.
	Chunks []int64
	// DType is the element type; bytes are kept in its byte order.
	DType rechunk.DType
	// Compressor is nil (raw chunks), zlib or zstd.
	Compressor *Compressor
	// FillValue is the JSON fill_value: a number, "NaN", "Infinity",
	// "-Infinity", a bool, [re, im] for complex dtypes, or null (nil),
	// which this package reads and writes as zero bytes.
	FillValue json.RawMessage
	// Separator is SeparatorDot or SeparatorSlash; "" means SeparatorDot.
	Separator string
}

// Validate reports whether m describes an array this package can read and
// write. The error wraps ErrMeta, ErrDType, ErrCompressor, ErrFillValue or
// ErrTooLarge.
func (m Meta) Validate() error {
	if err := validateGrid(m.Shape, m.Chunks); err != nil {
		return err
	}
	if err := m.Compressor.validate(); err != nil {
		return err
	}
	if m.Separator != "" && m.Separator != SeparatorDot && m.Separator != SeparatorSlash {
		return fmt.Errorf("dimension_separator %q: %w", m.Separator, ErrMeta)
	}
	if _, err := FillBytes(m.DType, m.FillValue); err != nil {
		return err
	}
	return checkChunkBytes(m.DType, m.Chunks)
}

// validateGrid checks shape and chunks and the number of chunks per axis.
func validateGrid(shape, chunks []int64) error {
	if len(shape) != len(chunks) {
		return fmt.Errorf("shape %v and chunks %v have different lengths: %w", shape, chunks, ErrMeta)
	}
	for d := range shape {
		if shape[d] < 0 || chunks[d] < 1 {
			return fmt.Errorf("shape %v, chunks %v: axis %d: %w", shape, chunks, d, ErrMeta)
		}
		if (shape[d]-1)/chunks[d] >= MaxChunksPerAxis {
			return fmt.Errorf("shape %v, chunks %v: axis %d has over %d chunks: %w", shape, chunks, d, MaxChunksPerAxis, ErrTooLarge)
		}
	}
	return nil
}

// checkChunkBytes checks dt and that a full chunk fits MaxChunkBytes.
func checkChunkBytes(dt rechunk.DType, chunks []int64) error {
	n, err := rechunk.NumBytes(dt, chunks)
	if err != nil {
		return fmt.Errorf("dtype %q, chunks %v: %w: %w", dt, chunks, ErrDType, err)
	}
	if n > MaxChunkBytes {
		return fmt.Errorf("chunks %v of %s take %d bytes, over %d: %w", chunks, dt, n, MaxChunkBytes, ErrTooLarge)
	}
	return nil
}

// validate checks the compressor's id and level; nil is valid.
func (c *Compressor) validate() error {
	if c == nil {
		return nil
	}
	switch c.ID {
	case CompressorZlib:
		if c.Level < -1 || c.Level > 9 {
			return fmt.Errorf("zlib level %d not in -1..9: %w", c.Level, ErrCompressor)
		}
	case CompressorZstd:
		if c.Level < -(1<<17) || c.Level > 22 {
			return fmt.Errorf("zstd level %d not in -131072..22: %w", c.Level, ErrCompressor)
		}
	default:
		return fmt.Errorf("compressor %q (only null, zlib and zstd are supported): %w", c.ID, ErrCompressor)
	}
	return nil
}

// normalized returns a deep copy of m with the default separator filled in
// and the fill value compacted.
func (m Meta) normalized() Meta {
	out := Meta{
		Shape:     nonNil(slices.Clone(m.Shape)),
		Chunks:    nonNil(slices.Clone(m.Chunks)),
		DType:     m.DType,
		Separator: m.Separator,
	}
	if m.Compressor != nil {
		c := *m.Compressor
		out.Compressor = &c
	}
	if out.Separator == "" {
		out.Separator = SeparatorDot
	}
	out.FillValue = compactJSON(m.FillValue)
	return out
}

// compactJSON returns raw without insignificant space, nil for empty or
// null, and raw unchanged (copied) if it is not valid JSON.
func compactJSON(raw json.RawMessage) json.RawMessage {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return nil
	}
	var b bytes.Buffer
	if json.Compact(&b, t) != nil {
		return slices.Clone(raw)
	}
	return b.Bytes()
}

// nonNil returns s, or an empty slice if s is nil (so JSON says [], not null).
func nonNil(s []int64) []int64 {
	if s == nil {
		return []int64{}
	}
	return s
}

// gridOf returns the number of chunks along each axis.
func gridOf(shape, chunks []int64) []int {
	g := make([]int, len(shape))
	for d := range shape {
		n := shape[d] / chunks[d]
		if shape[d]%chunks[d] != 0 {
			n++
		}
		g[d] = int(n)
	}
	return g
}
