package spill

import (
	"encoding/binary"
	"fmt"
)

// A group is one disk value holding the pieces of one (shuffle, partition) that one spill
// wrote: one badger entry per group instead of one per piece. Small pieces (the demo's are
// ~500 bytes) cost a badger write and an LSM entry each; in groups they go to the value log
// in one write. The group's disk key is the key of its first piece.
//
// Encoding: the pieces in strictly increasing Key order, each as
//
//	task u64 | attempt u32 | seq u32 | length u32 | bytes
//
// in big endian. The partition is the disk key's.

const (
	// groupHeaderLen is the encoded size of one piece's header in a group.
	groupHeaderLen = 8 + 4 + 4 + 4
	// maxGroupBytes caps the payload of a group (a larger piece is a group of its own). A
	// scan holds in memory the groups of its partition whose key ranges overlap, so the cap
	// bounds what one spill adds to that.
	maxGroupBytes = 1 << 20
)

// appendGroupPiece appends one piece to a group value.
func appendGroupPiece(b []byte, k Key, data []byte) []byte {
	b = binary.BigEndian.AppendUint64(b, k.Task)
	b = binary.BigEndian.AppendUint32(b, k.Attempt)
	b = binary.BigEndian.AppendUint32(b, k.Seq)
	b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
	return append(b, data...)
}

// setGroupPieceLen sets the length in the header at the start of b, which appendGroupPiece
// wrote with empty data before the piece's bytes were appended.
func setGroupPieceLen(b []byte, n int) {
	binary.BigEndian.PutUint32(b[16:20], uint32(n))
}

// groupCursor walks the pieces of a group. Its key and data describe the current piece.
type groupCursor struct {
	rest []byte // encoded pieces after the current one
	key  Key
	data []byte
	done bool // past the last piece
}

// newGroupCursor checks a whole group value read under disk key first and positions a
// cursor on its first piece. The cursor aliases value.
func newGroupCursor(first Key, value []byte) (*groupCursor, error) {
	if err := checkGroup(first, value); err != nil {
		return nil, err
	}
	c := &groupCursor{rest: value, key: Key{Partition: first.Partition}}
	c.next()
	return c, nil
}

// checkGroup reports a group value that encodeGroup would not produce under disk key first:
// a truncated header or piece, keys not strictly increasing, a first piece other than first.
func checkGroup(first Key, value []byte) error {
	c := groupCursor{rest: value, key: Key{Partition: first.Partition}}
	for i := 0; len(c.rest) > 0; i++ {
		prev := c.key
		if len(c.rest) < groupHeaderLen {
			return fmt.Errorf("%w: piece %d: %d header bytes, want %d", ErrBadValue, i, len(c.rest), groupHeaderLen)
		}
		if n := binary.BigEndian.Uint32(c.rest[16:20]); uint64(n) > uint64(len(c.rest)-groupHeaderLen) {
			return fmt.Errorf("%w: piece %d: length %d, %d bytes left", ErrBadValue, i, n, len(c.rest)-groupHeaderLen)
		}
		c.next()
		if (i == 0 && c.key != first) || (i > 0 && c.key.Compare(prev) <= 0) {
			return fmt.Errorf("%w: piece %d: key %v out of order (after %v, group key %v)", ErrBadValue, i, c.key, prev, first)
		}
	}
	if len(value) == 0 {
		return fmt.Errorf("%w: empty group", ErrBadValue)
	}
	return nil
}

// next moves to the next piece; false at the end. The group must have passed checkGroup.
func (c *groupCursor) next() bool {
	if len(c.rest) == 0 {
		c.done, c.data = true, nil
		return false
	}
	r := c.rest
	c.key.Task = binary.BigEndian.Uint64(r[0:8])
	c.key.Attempt = binary.BigEndian.Uint32(r[8:12])
	c.key.Seq = binary.BigEndian.Uint32(r[12:16])
	n := int(binary.BigEndian.Uint32(r[16:20]))
	c.data = r[groupHeaderLen : groupHeaderLen+n : groupHeaderLen+n]
	c.rest = r[groupHeaderLen+n:]
	return true
}
