package spill

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestKeyEncodeDecode(t *testing.T) {
	cases := []struct {
		name    string
		shuffle string
		key     Key
	}{
		{"zero key", "s", Key{}},
		{"max fields", "shuffle-1", Key{math.MaxUint32, math.MaxUint64, math.MaxUint32, math.MaxUint32}},
		{"typical", "df-2026-11-22", Key{Partition: 17, Task: 999, Attempt: 1, Seq: 3}},
		{"longest ID", strings.Repeat("x", MaxShuffleIDLen), Key{Partition: 1}},
		{"binary ID", "\x00\xff\x01", Key{Task: 1 << 40}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := encodeKey(tc.shuffle, tc.key)
			if !bytes.HasPrefix(b, partitionPrefix(tc.shuffle, tc.key.Partition)) {
				t.Fatalf("key %x lacks its partition prefix", b)
			}
			sh, k, err := decodeKey(b)
			if err != nil || sh != tc.shuffle || k != tc.key {
				t.Fatalf("decodeKey = %q, %v, %v; want %q, %v", sh, k, err, tc.shuffle, tc.key)
			}
		})
	}
}

func TestKeyDecodeRejects(t *testing.T) {
	good := encodeKey("abc", Key{1, 2, 3, 4})
	cases := []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"one byte", []byte{0}},
		{"zero length ID", append([]byte{0, 0}, make([]byte, keyTailLen)...)},
		{"truncated", good[:len(good)-1]},
		{"trailing byte", append(bytes.Clone(good), 0)},
		{"length past end", []byte{0xff, 0xff, 'a'}},
		{"ID too long", append([]byte{0x04, 0x01}, make([]byte, 1025+keyTailLen)...)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := decodeKey(tc.b); !errors.Is(err, ErrBadKey) {
				t.Fatalf("decodeKey(%x) error = %v, want ErrBadKey", tc.b, err)
			}
		})
	}
}

// TestKeyOrder checks that bytewise order of encoded keys is Key order, and that one shuffle's
// prefix never covers another shuffle's keys.
func TestKeyOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	small := func() uint32 { return uint32(rng.IntN(3)) * (math.MaxUint32 / 2) }
	for range 2000 {
		a := Key{small(), uint64(rng.IntN(3)) << 40, small(), small()}
		b := Key{small(), uint64(rng.IntN(3)) << 40, small(), small()}
		if got, want := bytes.Compare(encodeKey("s", a), encodeKey("s", b)), a.Compare(b); got != want {
			t.Fatalf("bytes.Compare(%v, %v) = %d, Key.Compare = %d", a, b, got, want)
		}
	}
	if bytes.HasPrefix(encodeKey("ab", Key{}), shufflePrefix("a")) {
		t.Fatal(`shuffle "a" prefix covers keys of shuffle "ab"`)
	}
}

// FuzzKeyDecode checks that decodeKey never panics and accepts exactly what encodeKey makes.
func FuzzKeyDecode(f *testing.F) {
	f.Add(encodeKey("s", Key{}))
	f.Add(encodeKey("df-2026-11-22", Key{17, 999, 1, 3}))
	f.Add(encodeKey("shuffle-1", Key{math.MaxUint32, math.MaxUint64, math.MaxUint32, math.MaxUint32}))
	f.Add(partitionPrefix("abc", 7))
	f.Add([]byte{0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		sh, k, err := decodeKey(b)
		if err != nil {
			if !errors.Is(err, ErrBadKey) {
				t.Fatalf("decodeKey(%x) error %v does not wrap ErrBadKey", b, err)
			}
			return
		}
		if re := encodeKey(sh, k); !bytes.Equal(re, b) {
			t.Fatalf("decodeKey(%x) = %q, %v; re-encoded as %x", b, sh, k, re)
		}
		if k2, err := decodeTail(b, len(shufflePrefix(sh))); err != nil || k2 != k {
			t.Fatalf("decodeTail(%x) = %v, %v; want %v", b, k2, err, k)
		}
	})
}
