package parquetio

import (
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/mempool"
)

// codecMem allocates the Parquet library's own buffers in a Writer: the
// pages it encodes and compresses. A job writes one file per partition,
// each with buffers of much the same sizes; from Go memory each would be
// allocated, cleared and collected, file after file (in a profile of a
// 16M-row merge, its writers spent ~0.7 CPU s clearing new buffers). The
// pool keeps them for the next file. A variable so that tests
// can poison what is freed (TestWritersShareBuffers).
//
// Readers keep Go memory: Arrow v15's reader still reads a page's bytes
// after it freed them (byte arrays read past the end once the freed buffer
// was poisoned, or taken by another reader), which a pool would turn into
// wrong or unreadable rows.
var codecMem memory.Allocator = new(mempool.Pool)
