// Package table is shufflenode's dataframe layer: it maps the rows of Arrow
// record batches to output partitions, cuts batches into per-destination
// groups, and encodes shards as Arrow IPC messages. It is pure: no network,
// no storage, no goroutines, no global state.
//
// # Partitioning rules
//
// A Rule (part of a shuffle's spec, JSON-encoded) is one of:
//
//   - Hash: the stable hash of one or more key columns, defined below; rows
//     where any key is null go to partition 0.
//   - Range: one key column and P-1 ascending divisions; partition i gets
//     keys in [div[i-1], div[i]) (the first partition is open below, the
//     last open above), so a key equal to a division goes to the partition
//     that division starts. Nulls and float NaNs go to the last partition.
//     Numbers compare as int64 (signed, date and timestamp columns, in their
//     stored unit), uint64 or float64; strings and binaries compare bytewise
//     with the UTF-8 bytes of JSON string divisions; bool divisions are JSON
//     true/false (false < true).
//   - Column: one integer column holds the partition; nulls and values
//     outside [0, P) are errors.
//
// Supported column types, for keys and for every column of a shuffled
// record: int8..int64, uint8..uint64, float16/32/64, bool, string,
// large_string, binary, large_binary, date32, date64, timestamp (any unit and
// zone). Rule.Validate, NewPartitioner, NewCodec and Split refuse others with
// ErrUnsupportedType naming the column and type.
//
// # The partitioning hash (stable: never change it)
//
// All arithmetic is on uint64 modulo 2^64. fmix64 is MurmurHash3's
// finaliser:
//
//	fmix64(x): x ^= x>>33; x *= 0xFF51AFD7ED558CCD; x ^= x>>33;
//	           x *= 0xC4CEB9FE1A85EC53; x ^= x>>33
//
// Each key value has a canonical byte string:
//
//   - signed integers, date32, date64 and timestamp: the value sign-extended
//     to int64, as 8 little-endian bytes;
//   - unsigned integers: zero-extended to uint64, 8 little-endian bytes;
//   - floats: converted exactly to float64; -0.0 becomes 0.0 and every NaN
//     becomes 0x7FF8000000000000; the IEEE-754 bits as 8 little-endian bytes;
//   - bool: false as the uint64 0, true as 1, 8 little-endian bytes;
//   - string and binary (also large): their bytes.
//
// The hash of a byte string b of length n starts with h = S ^ n where
// S = 0x9E3779B97F4A7C15; for each 8-byte little-endian word w of b in order
// (the last word zero-padded when n is not a multiple of 8),
// h = fmix64(h ^ w); if n == 0, h = fmix64(h). So an 8-byte value v hashes
// to fmix64(S ^ 8 ^ v).
//
// A row's hash is the hash of its first key column; each further key column
// with hash c folds in as h = fmix64(h*S + c). The partition is
// floor(h * P / 2^64), the high 64 bits of the 128-bit product h*P. The
// golden vectors in testdata/hash_golden.json pin this definition.
//
// # Splitting and encoding
//
// Partitioner.Partition computes a partition id per row, column by column
// over the Arrow buffers. Split orders the rows by (destination group,
// partition, input row) with one counting sort that gives every row its
// destination, then makes one sequential pass per column that scatters the
// values into new per-group buffers (a scatter with one write cursor per
// partition stays in cache where a gather of rows spread over the whole input
// would miss on every read), returning each group's record and its runs of
// partitions. A Codec writes one record batch per call as an Arrow IPC
// stream-format message (the schema travels once, as SchemaBytes) and
// decodes such messages without copying and defensively: garbage gives
// ErrCorrupt, never a panic, and allocation is bounded.
//
// # Caller's duties
//
// Records returned by Split, Decode, Concat, Slice and GenTask are owned by
// the caller, who must Release them; inputs are never retained past the
// call. A record from Decode aliases the bytes it was decoded from: keep
// them unchanged while the record lives. Arrays handed in must be valid
// Arrow data (offsets and buffers consistent); Decode validates what it
// decodes.
//
// # Concurrency
//
// Partitioner and Codec are safe for concurrent use; everything else is a
// function of its arguments.
package table
