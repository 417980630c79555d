// Package splitaxes plans how the old chunks of an n-d array are cut into the
// pieces that make up its new chunks: the pure planning core of a rechunk.
//
// # One axis
//
// NewAxis takes the old and the new chunk sizes of one axis and computes, for
// every old chunk, the ordered list of its splits. A Split names the new
// chunk the piece goes to, its split index (its position among the pieces
// that, concatenated in order, make up that new chunk), the slice
// [Start, Stop) of the old chunk, local to the old chunk, and its Offset
// inside the new chunk. The rules match Dask's (dask.array.rechunk.old_to_new
// as regrouped by distributed's P2P rechunk), which array users rely on:
//
//   - the totals of the old and the new sizes must match;
//   - a zero-size old chunk gets no splits;
//   - a zero-size new chunk at offset p takes the empty slice [p-lo, p-lo) of
//     the non-empty old chunk [lo, hi) with lo <= p < hi; at p == total it
//     takes the empty slice at the end of the last non-empty old chunk; if
//     the axis has no non-empty old chunk at all (total 0), it gets no piece;
//   - the splits of an old chunk are sorted by Start, ties in new-chunk order.
//
// Dask itself differs in one corner: when the last old chunks are zero-size,
// it gives a zero-size new chunk at the total an empty slice of the very last
// (zero-size) old chunk; this package follows the rules above.
//
// Unknown sizes (NaN in Dask) are spelled Unknown (-1). They are allowed only
// on an axis whose old and new sizes are identical, element by element: old
// chunk i then maps whole to new chunk i (a zero-size one too, as in Dask),
// with Stop == Unknown (open-ended) where the size is unknown. This also accepts an unchanged axis that mixes
// known and unknown sizes, as Dask does. Any other use of Unknown is
// ErrUnknownChanged.
//
// Planning an axis takes O(C_old + C_new) time and memory: one sweep over
// both lists. The cross product of old and new chunks is never built. The
// sweep emits the pieces in an order that is at once sorted by (old chunk,
// Start) and by (new chunk, split index), so both views of an axis are
// ranges of one array: Splits(old) and its inverse Pieces(new).
//
// # Run axes
//
// An axis whose chunks are not consecutive (DAP block with padding,
// block-cyclic, unstructured) is described by runs: Run says that global
// indices [Global, Global+Len) sit at [Local, Local+Len) of one chunk.
// NewRunAxis takes both sides' runs; Dist and SideOf make them from a
// distribution (CyclicRuns deals blocks round-robin in global order,
// UnstructuredRuns sorts indices into runs in O(n log n)). The old runs must
// hold every index once (positions no run names, such as communication
// padding, are dropped); the new runs must hold every index at least once
// and fill their chunks (padding repeats a neighbour's indices, so it is
// filled). The split is one sweep over both sides sorted by global index,
// O(R_old + R_new). Each (old chunk, new chunk) pair that shares indices is
// one Split whose Segs list its stretches: the piece is their dense gather,
// so NDSplits, Pieces, SplitIndex and NumPieces keep their meaning and the
// per-(task, partition) identity of a piece on the wire is unchanged.
// FromAxes builds a Plan that mixes run axes and regular ones.
//
// # n dimensions
//
// New plans every axis of an array. NDSplits(old index) lazily yields, for
// one old chunk, every NDSplit: the cartesian product of that chunk's
// per-axis splits. Pieces(new index) is the inverse view: every piece, from
// every old chunk, that makes up one new chunk; NumPieces tells a receiver
// how many pieces complete a new chunk.
//
// # Caller's duties
//
// Chunk indices passed to the n-d methods are checked and give ErrIndex; the
// per-axis methods yield nothing for an index out of range. Values yielded by
// the iterators are owned by the caller.
//
// # Concurrency
//
// Axis and Plan are immutable after construction and safe for concurrent use.
// The package has no goroutines, no I/O and no global state.
package splitaxes
