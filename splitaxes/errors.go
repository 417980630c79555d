package splitaxes

import "errors"

// Sentinel errors. Errors from New name the axis they concern; match them
// with errors.Is.
var (
	// ErrTotalMismatch means the old and new sizes of an axis add up to
	// different totals.
	ErrTotalMismatch = errors.New("splitaxes: totals of old and new chunks differ")
	// ErrUnknownChanged means unknown sizes appear on an axis whose chunking
	// changes: chunks must be unchanging along an axis with unknown sizes.
	ErrUnknownChanged = errors.New("splitaxes: chunks must be unchanging along an axis with unknown sizes")
	// ErrBadSize means a chunk size is negative (and not Unknown) or the
	// total of an axis overflows int64.
	ErrBadSize = errors.New("splitaxes: invalid chunk size")
	// ErrTooManyChunks means an axis has more chunks than a Plan can index.
	ErrTooManyChunks = errors.New("splitaxes: too many chunks on one axis")
	// ErrNDim means the old and new chunkings, or an index and the plan,
	// have different numbers of axes.
	ErrNDim = errors.New("splitaxes: number of axes differs")
	// ErrBadRun means a run of a run axis is out of the bounds of its
	// axis or chunk.
	ErrBadRun = errors.New("splitaxes: run out of bounds")
	// ErrOverlap means an old global index is held by two runs, or a new
	// chunk position is filled twice.
	ErrOverlap = errors.New("splitaxes: index held twice")
	// ErrGap means a global index is held by no chunk, or a new chunk
	// position is filled by no run.
	ErrGap = errors.New("splitaxes: index held by no chunk")
	// ErrIndex means a chunk index is out of range.
	ErrIndex = errors.New("splitaxes: chunk index out of range")
)
