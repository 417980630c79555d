package wire

import (
	"bytes"
	"errors"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"
)

// TestCombineCRC checks CombineCRC against the CRC of the concatenation,
// for pieces of every length up to 300 bytes and random longer ones, either
// one empty.
func TestCombineCRC(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 9))
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	check := func(la, lb int) {
		a, b := data[:la], data[la:la+lb]
		want := crc32.Checksum(data[:la+lb], castagnoli)
		if got := CombineCRC(crc32.Checksum(a, castagnoli), crc32.Checksum(b, castagnoli), lb); got != want {
			t.Fatalf("%d then %d bytes: combined %08x, want %08x", la, lb, got, want)
		}
	}
	for n := range 300 {
		check(rng.IntN(300), n)
		check(n, rng.IntN(300))
	}
	for range 200 {
		la := rng.IntN(len(data) / 2)
		check(la, rng.IntN(len(data)-la))
	}
	check(0, 0)
	check(0, len(data))
	check(len(data), 0)
}

// TestWriteFramePayload: a frame whose CRC is combined from known CRCs of
// some runs of its parts (empty parts, runs at either end, all of it, none)
// is byte for byte the frame WriteFrameParts writes; one known CRC wrong
// makes a frame the reader rejects (ErrChecksum).
func TestWriteFramePayload(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for iter := range 300 {
		p := randomPayload(rng, iter)
		var got, want bytes.Buffer
		if err := WriteFramePayload(&got, TypeShards, p); err != nil {
			t.Fatal(err)
		}
		if err := WriteFrameParts(&want, TypeShards, p.Parts); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("iter %d (%d parts, %d known): frame differs from WriteFrameParts'", iter, len(p.Parts), len(p.Known))
		}
		if len(p.Known) == 0 {
			continue
		}
		p.Known[rng.IntN(len(p.Known))].Sum ^= 1 << rng.IntN(32)
		var bad bytes.Buffer
		if err := WriteFramePayload(&bad, TypeShards, p); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadFrame(&bad, 0); !errors.Is(err, ErrChecksum) {
			t.Fatalf("iter %d: a wrong known CRC: %v, want ErrChecksum", iter, err)
		}
	}
}

// randomPayload makes parts of random sizes (some empty) and knows the
// CRCs of random runs of them.
func randomPayload(rng *rand.Rand, iter int) Payload {
	var p Payload
	for range rng.IntN(12) {
		b := make([]byte, []int{0, rng.IntN(40), rng.IntN(70 << 10)}[rng.IntN(3)])
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		p.Parts = append(p.Parts, b)
	}
	for i := 0; i < len(p.Parts); {
		n := 1 + rng.IntN(len(p.Parts)-i)
		if iter%5 == 0 || rng.IntN(2) == 0 { // iter%5: the whole payload known, run by run
			k := KnownCRC{First: i, Count: n}
			for _, b := range p.Parts[i : i+n] {
				k.Sum = crc32.Update(k.Sum, castagnoli, b)
				k.Len += len(b)
			}
			p.Known = append(p.Known, k)
		}
		i += n
	}
	return p
}

// TestReadPayloadReservedInPieces: the CRC taken as each read lands gives
// the frame, whatever sizes the reads come in, and finds a corrupted byte.
func TestReadPayloadReservedInPieces(t *testing.T) {
	payload := bytes.Repeat([]byte("pieces"), 100_000)
	frame := AppendFrame(nil, TypeShards, payload)
	bad := bytes.Clone(frame)
	bad[HeaderSize+len(payload)/2] ^= 4
	readers := map[string]func([]byte) io.Reader{
		"whole":    func(b []byte) io.Reader { return bytes.NewReader(b) },
		"one byte": func(b []byte) io.Reader { return iotest.OneByteReader(bytes.NewReader(b)) },
		"halves":   func(b []byte) io.Reader { return iotest.HalfReader(bytes.NewReader(b)) },
		"data+EOF": func(b []byte) io.Reader { return iotest.DataErrReader(bytes.NewReader(b)) },
	}
	for name, open := range readers {
		read := func(b []byte) (Frame, error) {
			r := open(b)
			h, err := ReadHeader(r, 0)
			if err != nil {
				return Frame{}, err
			}
			return h.ReadPayloadReserved(r)
		}
		if f, err := read(frame); err != nil || !bytes.Equal(f.Payload, payload) {
			t.Fatalf("%s: intact frame: %v", name, err)
		}
		if _, err := read(bad); !errors.Is(err, ErrChecksum) {
			t.Fatalf("%s: corrupted frame: %v, want ErrChecksum", name, err)
		}
		if _, err := read(frame[:len(frame)-3]); !errors.Is(err, ErrShortFrame) {
			t.Fatalf("%s: cut frame: %v, want ErrShortFrame", name, err)
		}
	}
}
