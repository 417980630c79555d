package parquetio

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// errDelta means a DELTA_BINARY_PACKED stream is malformed.
var errDelta = errors.New("malformed DELTA_BINARY_PACKED values")

// deltaHeader is the header of a DELTA_BINARY_PACKED stream.
type deltaHeader struct {
	blockSize, miniBlocks, total uint64
	first                        int64
}

// maxDeltaBlock bounds a stream's block size (values per block): writers
// use 128 (Arrow, parquet-mr) to 2048; a larger one is taken as corrupt.
const maxDeltaBlock = 1 << 12

// readDeltaHeader parses the header at the start of src and returns it and
// the bytes it took.
func readDeltaHeader(src []byte) (deltaHeader, int, error) {
	var h deltaHeader
	var n, off int
	h.blockSize, n = binary.Uvarint(src)
	off += max(n, 0)
	if n > 0 {
		h.miniBlocks, n = binary.Uvarint(src[off:])
		off += max(n, 0)
	}
	if n > 0 {
		h.total, n = binary.Uvarint(src[off:])
		off += max(n, 0)
	}
	if n > 0 {
		h.first, n = binary.Varint(src[off:])
		off += max(n, 0)
	}
	switch {
	case n <= 0:
		return h, 0, fmt.Errorf("%w: truncated header", errDelta)
	case h.blockSize == 0 || h.blockSize%128 != 0 || h.blockSize > maxDeltaBlock:
		return h, 0, fmt.Errorf("%w: block size %d", errDelta, h.blockSize)
	case h.miniBlocks == 0 || h.blockSize%h.miniBlocks != 0 || (h.blockSize/h.miniBlocks)%32 != 0:
		return h, 0, fmt.Errorf("%w: %d miniblocks in blocks of %d", errDelta, h.miniBlocks, h.blockSize)
	}
	return h, off, nil
}

// decodeDeltaEnd decodes the DELTA_BINARY_PACKED stream at the start of
// src, which must hold exactly want values, into dst (reused if large
// enough) and returns them and where the stream ends in src: what follows
// it (a DELTA_LENGTH_BYTE_ARRAY page's values) starts there. A last
// block's miniblocks past the last value take no bytes. The arithmetic
// wraps at 64 bits; for 32-bit values (a page's value lengths) the caller
// keeps the low 32 bits of each, which are those of 32-bit arithmetic.
// scratch is a buffer reused between calls.
func decodeDeltaEnd(dst []uint64, src []byte, want int, scratch *[]byte) ([]uint64, int, error) {
	h, off, err := readDeltaHeader(src)
	if err != nil {
		return dst, 0, err
	}
	if h.total != uint64(want) {
		return dst, 0, fmt.Errorf("%w: %d values, the page says %d", errDelta, h.total, want)
	}
	if cap(dst) < want {
		dst = make([]uint64, want)
	}
	dst = dst[:want]
	if want == 0 {
		return dst, off, nil
	}
	dst[0] = uint64(h.first)
	last, done := uint64(h.first), 1
	perMini := int(h.blockSize / h.miniBlocks)
	for done < want {
		minDelta, n := binary.Varint(src[off:])
		if n <= 0 {
			return dst, 0, fmt.Errorf("%w: truncated block header after %d values", errDelta, done)
		}
		off += n
		if off+int(h.miniBlocks) > len(src) {
			return dst, 0, fmt.Errorf("%w: truncated bit widths after %d values", errDelta, done)
		}
		widths := src[off : off+int(h.miniBlocks)]
		off += int(h.miniBlocks)
		for _, w := range widths {
			if done == want {
				break // the rest of the block's miniblocks hold no data
			}
			if w > 64 {
				return dst, 0, fmt.Errorf("%w: bit width %d", errDelta, w)
			}
			size := perMini * int(w) / 8
			if off+size > len(src) {
				return dst, 0, fmt.Errorf("%w: truncated miniblock after %d values", errDelta, done)
			}
			k := min(perMini, want-done)
			last = unpackDeltas(dst[done:done+k], padded(src[off:off+size], src[off:], scratch), uint(w), last, uint64(minDelta))
			off += size
			done += k
		}
	}
	return dst, off, nil
}

// padded returns mini, a miniblock's bytes, readable 8 bytes past any
// value's first byte plus one: rest (mini and what follows it in the page)
// when it has room, else a copy of mini in scratch with zeros after it.
func padded(mini, rest []byte, scratch *[]byte) []byte {
	if len(rest) >= len(mini)+9 {
		return rest
	}
	if cap(*scratch) < len(mini)+9 {
		*scratch = make([]byte, len(mini)+9)
	}
	s := (*scratch)[:len(mini)+9]
	copy(s, mini)
	clear(s[len(mini):])
	return s
}

// unpackDeltas unpacks len(dst) values of w bits (least significant bit
// first) from b, which must be readable 9 bytes past the last value's
// first byte, and stores the running sum from last, adding minDelta to
// each, in dst. It returns the last value.
func unpackDeltas(dst []uint64, b []byte, w uint, last, minDelta uint64) uint64 {
	if w == 0 {
		for i := range dst {
			last += minDelta
			dst[i] = last
		}
		return last
	}
	mask := ^uint64(0) >> (64 - w)
	bit := uint(0)
	for i := range dst {
		at, shift := bit>>3, bit&7
		v := binary.LittleEndian.Uint64(b[at:at+8]) >> shift
		if shift+w > 64 {
			v |= uint64(b[at+8]) << (64 - shift)
		}
		last += minDelta + v&mask
		dst[i] = last
		bit += w
	}
	return last
}
