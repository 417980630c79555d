package rechunk

import (
	"fmt"
	"math"
	"slices"
)

// Chunk is one n-d chunk: dtype, shape and its bytes in C order (the last
// axis varies fastest). A valid chunk has len(Data) == NumBytes(DType, Shape).
type Chunk struct {
	// DType is the element type.
	DType DType
	// Shape is the size of the chunk along each axis; all sizes are >= 0.
	Shape []int64
	// Data holds the elements in C order.
	Data []byte
	// Keep, when set, owns Data's memory (an off-heap arena, say): Data is
	// valid only while Keep is reachable. Whoever uses Data after the call
	// that returned the chunk keeps Keep alive as long (runtime.KeepAlive,
	// or a reference held beside Data). nil: Data is Go memory.
	Keep any
}

// NewChunk returns a zeroed chunk of the given dtype and shape. The error
// wraps ErrDType, ErrShape or ErrTooLarge.
func NewChunk(dt DType, shape []int64) (Chunk, error) {
	n, err := NumBytes(dt, shape)
	if err != nil {
		return Chunk{}, err
	}
	return Chunk{DType: dt, Shape: slices.Clone(shape), Data: make([]byte, n)}, nil
}

// NumBytes returns the byte count of a C-order array of dtype dt and the
// given shape. The error wraps ErrDType (invalid dt), ErrShape (a negative
// size) or ErrTooLarge (the count overflows int).
func NumBytes(dt DType, shape []int64) (int, error) {
	if !dt.valid() {
		return 0, fmt.Errorf("dtype %q: %w", dt, ErrDType)
	}
	n := int64(dt.ItemSize())
	for _, s := range shape {
		if s < 0 {
			return 0, fmt.Errorf("shape %v: %w", shape, ErrShape)
		}
		if s != 0 && n > math.MaxInt/s {
			return 0, fmt.Errorf("shape %v of %s: %w", shape, dt, ErrTooLarge)
		}
		n *= s
	}
	return int(n), nil
}

// Validate checks the dtype and shape of c and that its byte count matches.
// Call it on every chunk that comes from outside the process.
func (c Chunk) Validate() error {
	n, err := NumBytes(c.DType, c.Shape)
	if err != nil {
		return err
	}
	if len(c.Data) != n {
		return fmt.Errorf("shape %v of %s needs %d bytes, got %d: %w", c.Shape, c.DType, n, len(c.Data), ErrShape)
	}
	return nil
}
