package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// payload returns n deterministic bytes.
func payload(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>8)
	}
	return b
}

func TestFrameRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		typ  Type
		size int
	}{
		{"empty ack", TypeAck, 0},
		{"one byte", TypeControl, 1},
		{"small shards", TypeShards, 100},
		{"largest single write", TypeShards, smallFrame},
		{"smallest two writes", TypeTaskEnd, smallFrame + 1},
		{"one MiB", TypeShards, 1 << 20},
		{"unknown type", Type(200), 33},
		{"type zero", Type(0), 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := payload(tc.size)
			enc := AppendFrame([]byte("prefix"), tc.typ, p)[len("prefix"):]
			var buf bytes.Buffer
			if err := WriteFrame(&buf, tc.typ, p); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), enc) {
				t.Fatal("WriteFrame and AppendFrame disagree")
			}
			f, rest, err := DecodeFrame(enc, 1<<20)
			checkFrame(t, f, err, tc.typ, p)
			if len(rest) != 0 || cap(f.Payload) != len(f.Payload) {
				t.Fatalf("rest %d bytes, payload cap %d len %d", len(rest), cap(f.Payload), len(f.Payload))
			}
			f, err = ReadFrame(&buf, 1<<20)
			checkFrame(t, f, err, tc.typ, p)
			if _, err := ReadFrame(&buf, 1<<20); err != io.EOF {
				t.Fatalf("after the last frame: %v, want io.EOF", err)
			}
		})
	}
}

// checkFrame checks a decoded frame.
func checkFrame(t *testing.T, f Frame, err error, typ Type, p []byte) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if f.Type != typ || f.Flags != 0 || !bytes.Equal(f.Payload, p) {
		t.Fatalf("got type %v flags %d %d bytes, want %v, %d bytes", f.Type, f.Flags, len(f.Payload), typ, len(p))
	}
}

// TestHeaderLayout checks the documented byte layout against an independent
// computation of each field.
func TestHeaderLayout(t *testing.T) {
	p := []byte("hello, peer")
	b := AppendFrame(nil, TypeRefused, p)
	sum := crc32.Checksum(append(b[:8:8], p...), crc32.MakeTable(crc32.Castagnoli))
	want := []byte{2, 6, 0, 0, byte(len(p)), 0, 0, 0}
	want = binary.LittleEndian.AppendUint32(want, sum)
	if !bytes.Equal(b[:HeaderSize], want) || !bytes.Equal(b[HeaderSize:], p) {
		t.Fatalf("header % x, want % x", b[:HeaderSize], want)
	}
}

func TestFlagsIgnored(t *testing.T) {
	b := AppendFrame(nil, TypeAck, []byte("x"))
	b[2] = 0x05
	binary.LittleEndian.PutUint32(b[8:], crc32.Checksum(append(b[:8:8], 'x'), castagnoli))
	f, _, err := DecodeFrame(b, 0)
	if err != nil || f.Flags != 5 {
		t.Fatalf("flags %d, err %v", f.Flags, err)
	}
}

func TestCorruptEveryByte(t *testing.T) {
	good := AppendFrame(nil, TypeShards, payload(40))
	for i := range good {
		for _, mask := range []byte{0x01, 0x80, 0xff} {
			b := bytes.Clone(good)
			b[i] ^= mask
			_, _, err := DecodeFrame(b, 1<<20)
			if !isFrameErr(err) {
				t.Fatalf("byte %d ^ %#x: DecodeFrame err %v", i, mask, err)
			}
			_, err = ReadFrame(bytes.NewReader(b), 1<<20)
			if !isFrameErr(err) {
				t.Fatalf("byte %d ^ %#x: ReadFrame err %v", i, mask, err)
			}
		}
	}
}

// isFrameErr reports whether err is one of the decoders' errors.
func isFrameErr(err error) bool {
	for _, s := range []error{ErrVersion, ErrTooLarge, ErrShortFrame, ErrChecksum} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

func TestTruncated(t *testing.T) {
	good := AppendFrame(nil, TypeTaskEnd, payload(30))
	for n := range len(good) {
		_, rest, err := DecodeFrame(good[:n], 0)
		if !errors.Is(err, ErrShortFrame) || len(rest) != n {
			t.Fatalf("%d of %d bytes: DecodeFrame err %v, rest %d", n, len(good), err, len(rest))
		}
		_, err = ReadFrame(bytes.NewReader(good[:n]), 0)
		if n == 0 && err != io.EOF {
			t.Fatalf("empty stream: %v, want io.EOF", err)
		}
		if n > 0 && (!errors.Is(err, ErrShortFrame) || !errors.Is(err, io.ErrUnexpectedEOF)) {
			t.Fatalf("%d of %d bytes: ReadFrame err %v", n, len(good), err)
		}
	}
}

func TestEarlyRefusal(t *testing.T) {
	big := appendHeader(nil, TypeShards, DefaultMaxPayload+1)
	cases := []struct {
		name  string
		b     []byte
		limit int
		want  error
	}{
		{"bad version in first byte", []byte{1}, 0, ErrVersion},
		{"over limit in 8 bytes", big[:8], 0, ErrTooLarge},
		{"over caller limit", appendHeader(nil, TypeShards, 1001)[:8], 1000, ErrTooLarge},
		{"at caller limit", appendHeader(nil, TypeShards, 1000)[:8], 1000, ErrShortFrame},
		{"7 bytes", big[:7], 0, ErrShortFrame},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := DecodeFrame(tc.b, tc.limit); !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
		})
	}
}

// countingReader serves a header and then endless zeros, counting bytes.
type countingReader struct {
	hdr  []byte
	read int
}

func (r *countingReader) Read(p []byte) (int, error) {
	n := copy(p, r.hdr[min(r.read, len(r.hdr)):])
	if n == 0 {
		clear(p)
		n = len(p)
	}
	r.read += n
	return n, nil
}

func TestTooLargeNotAllocated(t *testing.T) {
	hdr := appendHeader(nil, TypeShards, 1<<30)
	r := &countingReader{hdr: hdr}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const runs = 100
	for range runs {
		r.read = 0
		if _, err := ReadFrame(r, 1<<20); !errors.Is(err, ErrTooLarge) {
			t.Fatalf("err %v, want ErrTooLarge", err)
		}
		if r.read != HeaderSize {
			t.Fatalf("read %d bytes of a refused frame, want %d", r.read, HeaderSize)
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / runs; per > 4<<10 {
		t.Fatalf("allocated %d bytes per refused 1 GiB frame", per)
	}
}

// TestSplitFeeding feeds a stream of frames to DecodeFrame in two pieces,
// cut at every position, the way a caller appending reads would.
func TestSplitFeeding(t *testing.T) {
	var stream []byte
	want := []Frame{{TypeShards, 0, payload(20)}, {TypeAck, 0, []byte{}}, {Type(77), 0, payload(3)}}
	for _, f := range want {
		stream = AppendFrame(stream, f.Type, f.Payload)
	}
	for cut := range len(stream) + 1 {
		got, err := feedLimit(1<<20, stream[:cut], stream[cut:])
		if err != nil || len(got) != len(want) {
			t.Fatalf("cut %d: %d frames, err %v", cut, len(got), err)
		}
		for i := range want {
			if got[i].Type != want[i].Type || !bytes.Equal(got[i].Payload, want[i].Payload) {
				t.Fatalf("cut %d: frame %d differs", cut, i)
			}
		}
	}
}

// writeCounter counts Write calls and can fail.
type writeCounter struct {
	calls int
	err   error
}

func (w *writeCounter) Write(p []byte) (int, error) {
	w.calls++
	if w.err != nil {
		return 0, w.err
	}
	return len(p), nil
}

func TestWriteFrameCalls(t *testing.T) {
	cases := []struct {
		name  string
		size  int
		calls int
	}{
		{"small", 64, 1},
		{"boundary", smallFrame, 1},
		{"large", smallFrame + 1, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := &writeCounter{}
			if err := WriteFrame(w, TypeShards, payload(tc.size)); err != nil || w.calls != tc.calls {
				t.Fatalf("calls %d err %v, want %d", w.calls, err, tc.calls)
			}
		})
	}
	boom := errors.New("boom")
	w := &writeCounter{err: boom}
	if err := WriteFrame(w, TypeShards, payload(smallFrame+1)); !errors.Is(err, boom) || w.calls != 1 {
		t.Fatalf("err %v after %d calls", err, w.calls)
	}
}

func TestTypeNames(t *testing.T) {
	for typ, want := range map[Type]string{TypeShards: "shards", TypeRefused: "refused", 0: "type(0)", 16: "type(16)"} {
		if typ.String() != want || typ.Known() != (want[0] != 't') {
			t.Errorf("%d: %q known %v", uint8(typ), typ.String(), typ.Known())
		}
	}
}

// A frame that claims 8 MiB but brings 10 bytes must not cost 8 MiB.
func TestReadFrameDoesNotTrustClaimedLength(t *testing.T) {
	hdr := AppendFrame(nil, TypeShards, make([]byte, 8<<20))[:HeaderSize+10] // claims 8 MiB, sends 10 bytes
	allocs := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			_, _ = ReadFrame(bytes.NewReader(hdr), DefaultMaxPayload)
		}
	}).AllocedBytesPerOp()
	if allocs > 2*readChunk {
		t.Fatalf("a frame claiming 8 MiB with 10 bytes sent allocated %d bytes", allocs)
	}
	big := make([]byte, 3*readChunk+5)
	for i := range big {
		big[i] = byte(i)
	}
	f, err := ReadFrame(bytes.NewReader(AppendFrame(nil, TypeShards, big)), DefaultMaxPayload)
	if err != nil || !bytes.Equal(f.Payload, big) {
		t.Fatalf("large frame round trip: %v", err)
	}
}

// TestSkipPayload reads a header, skips its payload and reads the next
// frame from the same stream; a header whose payload is cut short fails.
func TestSkipPayload(t *testing.T) {
	var buf bytes.Buffer
	first, second := bytes.Repeat([]byte{7}, 3000), []byte("next")
	buf.Write(AppendFrame(nil, TypeShards, first))
	buf.Write(AppendFrame(nil, TypeControl, second))
	h, err := ReadHeader(&buf, 0)
	if err != nil || h.Len != len(first) {
		t.Fatalf("ReadHeader: %+v, %v", h, err)
	}
	if err := h.SkipPayload(&buf); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFrame(&buf, 0)
	if err != nil || f.Type != TypeControl || string(f.Payload) != "next" {
		t.Fatalf("frame after the skipped one: %v %q, %v", f.Type, f.Payload, err)
	}
	cut := bytes.NewReader(AppendFrame(nil, TypeShards, first)[:HeaderSize+10])
	if h, err = ReadHeader(cut, 0); err != nil {
		t.Fatal(err)
	}
	if err := h.SkipPayload(cut); !errors.Is(err, ErrShortFrame) {
		t.Fatalf("skipping a cut payload: %v, want ErrShortFrame", err)
	}
}

// TestReadPayloadReserved reads the same frames as ReadPayload: intact
// ones whole, a cut one as ErrShortFrame, a corrupted one as ErrChecksum.
func TestReadPayloadReserved(t *testing.T) {
	payload := bytes.Repeat([]byte("shard"), 500_000) // past readChunk
	frame := AppendFrame(nil, TypeShards, payload)
	read := func(b []byte) (Frame, error) {
		r := bytes.NewReader(b)
		h, err := ReadHeader(r, 0)
		if err != nil {
			return Frame{}, err
		}
		return h.ReadPayloadReserved(r)
	}
	if f, err := read(frame); err != nil || f.Type != TypeShards || !bytes.Equal(f.Payload, payload) {
		t.Fatalf("intact frame: %v", err)
	}
	if _, err := read(frame[:len(frame)-1]); !errors.Is(err, ErrShortFrame) {
		t.Fatalf("cut frame: %v, want ErrShortFrame", err)
	}
	bad := slices.Clone(frame)
	bad[len(bad)-1] ^= 1
	if _, err := read(bad); !errors.Is(err, ErrChecksum) {
		t.Fatalf("corrupted frame: %v, want ErrChecksum", err)
	}
}

// TestWriteFramePartsSameBytes: a frame written from parts (small ones
// gathered, large ones in place) is byte for byte the frame of the joined
// payload, and reads back.
func TestWriteFramePartsSameBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	sizes := [][]int{{}, {0}, {5}, {1, 2, 3}, {100 << 10}, {10, 40 << 10, 7, 70 << 10, 3}, {60 << 10, 10 << 10, 1}}
	for _, ss := range sizes {
		var parts [][]byte
		for _, n := range ss {
			p := make([]byte, n)
			for i := range p {
				p[i] = byte(rng.Uint32())
			}
			parts = append(parts, p)
		}
		var got, want bytes.Buffer
		if err := WriteFrameParts(&got, TypeShards, parts); err != nil {
			t.Fatal(err)
		}
		if err := WriteFrame(&want, TypeShards, Join(parts)); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("parts %v: frame differs from the joined payload's", ss)
		}
		f, err := ReadFrame(&got, 0)
		if err != nil || !bytes.Equal(f.Payload, Join(parts)) {
			t.Fatalf("parts %v: read back %v", ss, err)
		}
	}
}

// TestVecMatchesEncoder: joined, a Vec's parts are what an Encoder writes,
// with the blobs aligned from the start of the message, and referenced.
func TestVecMatchesEncoder(t *testing.T) {
	blobs := [][][]byte{{[]byte("abc")}, {nil}, {[]byte("0123456789"), []byte("xy")}, {make([]byte, 1000)}}
	var v Vec
	var e Encoder
	for i, b := range blobs {
		v.String("hdr")
		e.String("hdr")
		v.Uvarint(uint64(i * 300))
		e.Uvarint(uint64(i * 300))
		v.AlignedBlobParts(b, 8)
		e.AlignedBlob(Join(b), 8)
	}
	v.Uvarint(7)
	e.Uvarint(7)
	if got := Join(v.Parts()); !bytes.Equal(got, e.Bytes()) {
		t.Fatalf("vec %x\nencoder %x", got, e.Bytes())
	}
	var w Vec
	w.AlignedBlob(blobs[3][0], 8)
	if ps := w.Parts(); &ps[len(ps)-1][0] != &blobs[3][0][0] {
		t.Fatal("the blob was copied")
	}
}

// TestRecyclePayload: a large payload read by ReadPayloadReserved goes back
// to the pool and is handed out again for a frame of the same size class;
// buffers of other capacities are ignored.
func TestRecyclePayload(t *testing.T) {
	payload := bytes.Repeat([]byte{7}, 100<<10)
	var buf bytes.Buffer
	if err := WriteFrame(&buf, TypeShards, payload); err != nil {
		t.Fatal(err)
	}
	h, err := ReadHeader(&buf, 0)
	if err != nil {
		t.Fatal(err)
	}
	f, err := h.ReadPayloadReserved(&buf)
	if err != nil || !bytes.Equal(f.Payload, payload) || cap(f.Payload) != 128<<10 {
		t.Fatalf("read %d bytes (cap %d), err %v", len(f.Payload), cap(f.Payload), err)
	}
	Recycle(f.Payload)
	Recycle(make([]byte, 100<<10)) // not a pooled size: ignored
	again := newPayload(90 << 10)
	if len(again) != 90<<10 || cap(again) != 128<<10 {
		t.Fatalf("newPayload: len %d cap %d", len(again), cap(again))
	}
}
