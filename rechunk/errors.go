package rechunk

import "errors"

// Sentinel errors. Errors of an Assembler name its new chunk and the split
// index concerned; match them with errors.Is.
var (
	// ErrDType means a dtype string is not one this package knows.
	ErrDType = errors.New("rechunk: invalid dtype")
	// ErrDTypeMismatch means a piece's dtype is not the new chunk's.
	ErrDTypeMismatch = errors.New("rechunk: dtype mismatch")
	// ErrShape means a shape is invalid, a piece's shape is not the one its
	// split index calls for, or a chunk's byte count does not match its
	// shape.
	ErrShape = errors.New("rechunk: wrong shape")
	// ErrTooLarge means a chunk's byte count overflows int.
	ErrTooLarge = errors.New("rechunk: chunk too large")
	// ErrAlloc means Config.Alloc returned no buffer, or one of the wrong
	// size; the piece that needed it was refused and may be placed again.
	ErrAlloc = errors.New("rechunk: no buffer for new chunk")
	// ErrSlice means a slice is out of a chunk's bounds, or has the wrong
	// number of axes.
	ErrSlice = errors.New("rechunk: slice out of bounds")
	// ErrSplitIndex means a split index is out of range for a new chunk, or
	// an old chunk contributes nothing to it.
	ErrSplitIndex = errors.New("rechunk: split index out of range")
	// ErrDuplicate means a piece was placed twice.
	ErrDuplicate = errors.New("rechunk: piece placed twice")
	// ErrBadPiece means encoded piece bytes (from a peer or from disk) are
	// malformed: a bad header, or a byte count that does not match the shape.
	ErrBadPiece = errors.New("rechunk: malformed piece")
	// ErrPieceDiffers means a piece was placed again with other bytes than
	// the first time: two attempts of one input task sent different data.
	ErrPieceDiffers = errors.New("rechunk: piece differs from the one placed before")
	// ErrIncomplete means a new chunk was read before all its pieces arrived.
	ErrIncomplete = errors.New("rechunk: pieces missing")
)
