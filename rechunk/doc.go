// Package rechunk holds n-d array chunks and moves their bytes: it cuts the
// ndsplits planned by package splitaxes out of old chunks and assembles new
// chunks from the pieces.
//
// A Chunk is a NumPy-style dtype (DType, parsed from strings such as "<f8",
// "|u1" or ">i4"), a shape and the chunk's bytes in C order. The package never
// looks inside the elements: byte order is carried as-is and nothing is ever
// swapped, so a ">f8" array stays big-endian from end to end.
//
// Cut and AppendCut copy one n-d slice out of a chunk, one contiguous run at
// a time: the trailing axes that a slice covers whole are merged with the
// first partial one into runs of bytes, so cutting whole rows or whole planes
// costs a few large copies, never a loop over elements.
//
// An Assembler builds one new chunk. Each piece goes straight into one buffer
// of the chunk's final size at its place (no list of pieces concatenated at
// the end). It refuses a piece of the wrong dtype or shape, a split index out
// of range and a piece placed twice, each with a sentinel error, and it says
// which pieces are missing. Along an axis of unknown size (an unchanged axis
// with splitaxes.Unknown sizes) every piece spans the whole axis, so the first
// piece tells the size and the buffer is allocated then, at its final size;
// later pieces must agree.
//
// # Caller's duties
//
// Validate chunks that come from outside the process (Chunk.Validate) before
// cutting them; Cut validates too. An Assembler's pieces are copied, so the
// caller may reuse a piece's bytes once Place returns. The chunk returned by
// Assembler.Chunk shares the assembler's buffer.
//
// # Concurrency
//
// DType and Chunk values are plain data. An Assembler is not safe for
// concurrent use: one goroutine (the owner of the new chunk) places its
// pieces. The package has no goroutines, no I/O and no global state.
package rechunk
