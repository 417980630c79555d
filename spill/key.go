package spill

import (
	"cmp"
	"encoding/binary"
	"fmt"
)

// MaxShuffleIDLen is the longest shuffle ID the store accepts, in bytes.
const MaxShuffleIDLen = 1024

// keyTailLen is the encoded size of a Key: partition, task, attempt, seq.
const keyTailLen = 4 + 8 + 4 + 4

// Key orders pieces of one shuffle: by partition, then task, attempt, seq (big-endian on disk
// so badger order == key order).
type Key struct {
	Partition uint32
	Task      uint64
	Attempt   uint32
	Seq       uint32
}

// Compare returns -1, 0 or +1 as k sorts before, equal to or after o.
func (k Key) Compare(o Key) int {
	if c := cmp.Compare(k.Partition, o.Partition); c != 0 {
		return c
	}
	if c := cmp.Compare(k.Task, o.Task); c != 0 {
		return c
	}
	if c := cmp.Compare(k.Attempt, o.Attempt); c != 0 {
		return c
	}
	return cmp.Compare(k.Seq, o.Seq)
}

// String formats k for errors and logs.
func (k Key) String() string {
	return fmt.Sprintf("partition %d task %d attempt %d seq %d", k.Partition, k.Task, k.Attempt, k.Seq)
}

// shufflePrefix is the disk prefix of every key of shuffle: a 2-byte big-endian length and the
// ID. The length prefix keeps "a" from being a prefix of "ab".
func shufflePrefix(shuffle string) []byte {
	b := make([]byte, 0, 2+len(shuffle)+keyTailLen)
	b = binary.BigEndian.AppendUint16(b, uint16(len(shuffle)))
	return append(b, shuffle...)
}

// partitionPrefix is the disk prefix of every key of (shuffle, partition).
func partitionPrefix(shuffle string, partition uint32) []byte {
	return binary.BigEndian.AppendUint32(shufflePrefix(shuffle), partition)
}

// encodeKey returns the disk key of (shuffle, k).
func encodeKey(shuffle string, k Key) []byte {
	b := partitionPrefix(shuffle, k.Partition)
	b = binary.BigEndian.AppendUint64(b, k.Task)
	b = binary.BigEndian.AppendUint32(b, k.Attempt)
	return binary.BigEndian.AppendUint32(b, k.Seq)
}

// decodeKey is the inverse of encodeKey. It rejects any input that encodeKey would not
// produce.
func decodeKey(b []byte) (string, Key, error) {
	if len(b) < 2 {
		return "", Key{}, fmt.Errorf("%w: %d bytes, want at least 2", ErrBadKey, len(b))
	}
	n := int(binary.BigEndian.Uint16(b))
	if n == 0 || n > MaxShuffleIDLen {
		return "", Key{}, fmt.Errorf("%w: shuffle ID length %d out of range [1, %d]", ErrBadKey, n, MaxShuffleIDLen)
	}
	if len(b) != 2+n+keyTailLen {
		return "", Key{}, fmt.Errorf("%w: %d bytes, want %d", ErrBadKey, len(b), 2+n+keyTailLen)
	}
	k, err := decodeTail(b, 2+n)
	return string(b[2 : 2+n]), k, err
}

// decodeTail decodes the Key that follows a shuffle prefix of prefixLen bytes.
func decodeTail(b []byte, prefixLen int) (Key, error) {
	if prefixLen < 0 || len(b) != prefixLen+keyTailLen {
		return Key{}, fmt.Errorf("%w: %d bytes, want %d", ErrBadKey, len(b), prefixLen+keyTailLen)
	}
	t := b[prefixLen:]
	return Key{
		Partition: binary.BigEndian.Uint32(t[0:4]),
		Task:      binary.BigEndian.Uint64(t[4:12]),
		Attempt:   binary.BigEndian.Uint32(t[12:16]),
		Seq:       binary.BigEndian.Uint32(t[16:20]),
	}, nil
}

// checkShuffleID reports whether shuffle can name a shuffle on disk.
func checkShuffleID(shuffle string) error {
	if shuffle == "" || len(shuffle) > MaxShuffleIDLen {
		return fmt.Errorf("%w: shuffle ID of %d bytes, want 1 to %d", ErrInvalid, len(shuffle), MaxShuffleIDLen)
	}
	return nil
}
