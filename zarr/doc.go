// Package zarr reads and writes Zarr v2 arrays stored as directories (a
// "directory store"), one chunk at a time, for the array rechunk job: the
// chunks it reads and writes are rechunk.Chunk values and ChunkSizes gives
// the per-axis chunk sizes that splitaxes.New plans with.
//
// # What is supported
//
// The array's directory holds .zarray (JSON) and one file per chunk. This
// package reads and writes:
//
//   - zarr_format 2; shape and chunks of any length (0 to n axes; a
//     zero-dimensional array, shape [], has one chunk named "0"; an axis of
//     size 0 has no chunks); other keys of .zarray are ignored, and .zattrs
//     is neither read nor written;
//   - dtype: a string rechunk.ParseDType accepts ("<f8", ">i4", "|u1",
//     "|b1", "<c16", ...); "<u1"-style one-byte types are read as "|u1".
//     Structured, string, datetime and float16 dtypes are refused (ErrDType);
//   - compressor: null, {"id":"zlib","level":N} or {"id":"zstd","level":N}
//     (other keys of the config, such as zstd's "checksum", are ignored);
//     any other id, blosc and gzip included, is refused naming the id
//     (ErrCompressor);
//   - order "C" only (ErrOrder for "F"); filters null or [] only
//     (ErrFilters, naming the filters' ids);
//   - fill_value as FillBytes documents; null is read and written as zero
//     bytes (zarr-python leaves such chunks uninitialised);
//   - dimension_separator "." (default: chunk "i.j.k") or "/" (chunk
//     "i/j/k", nested directories).
//
// Every chunk file holds the full chunk shape, edge chunks included (padded
// with the fill value when written, the padding dropped when read). A
// missing chunk file reads as the fill value everywhere. Bytes are kept in
// the dtype's byte order: nothing is ever swapped.
//
// # Safety of decoding
//
// .zarray and chunk files are untrusted: decoding never panics, and memory
// is bounded. Open refuses a .zarray over 1 MiB, chunks over MaxChunkBytes
// and axes with over MaxChunksPerAxis chunks. ReadChunk refuses a stored
// file larger than a chunk can compress to, and decompresses into a buffer
// of the full chunk's size plus one byte: a stream that decodes to more, or
// to fewer bytes, is ErrCorrupt (so a zip bomb costs at most one chunk).
//
// # Caller's duties
//
// Open or Create an Array, then ReadChunk and WriteChunk chunk by chunk
// (ChunkShape tells the trimmed shape a chunk must have), then Close. Create
// refuses a directory that is not empty (ErrExists): it never overwrites a
// store. WriteChunk syncs each chunk file before renaming it into place but
// does not sync directories: after a machine crash a chunk may be missing
// (and read as fill), never torn. Rewriting a chunk replaces it. ReadChunk
// returns a chunk the caller owns; WriteChunk does not keep its argument.
//
// # Concurrency
//
// An Array is safe for concurrent use by several goroutines reading and
// writing different chunks; Close must not run concurrently with them. The
// package starts no goroutines (zstd is used through EncodeAll and DecodeAll
// only; Close releases their buffers) and has no global state.
package zarr
