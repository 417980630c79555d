package wire

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/bits"
	"slices"
	"sync"
)

// Version is the frame format version carried in byte 0 of every header.
// Version 2 (2026-11-28): shard end markers carry row sums per partition,
// and per-task control reports may be in control's binary form; a node of
// version 1 refuses such frames as ErrVersion instead of misreading them.
const Version = 2

// HeaderSize is the size of a frame header in bytes.
const HeaderSize = 12

// DefaultMaxPayload is the payload limit used when a caller passes a
// maxPayload <= 0 to ReadFrame or DecodeFrame.
const DefaultMaxPayload = 64 << 20

// smallFrame is the largest payload WriteFrame copies next to its header to
// issue a single Write; larger payloads are written in place after it.
const smallFrame = 16 << 10

// castagnoli is the CRC-32C table; it is immutable after initialisation.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Type is the kind of a frame (header byte 1).
type Type uint8

// Frame types. Values 1..15 belong to this package; 16..63 are reserved for
// the shuffle service's own message types, 64..255 for future use. Every
// request frame is answered by exactly one reply frame of type TypeAck,
// TypeBusy or TypeRefused on the same stream; a TypeRead request first gets
// any number of TypeData frames (its streamed reply), then that final frame.
const (
	// TypeShards carries a batch of shards (request).
	TypeShards Type = 1 + iota
	// TypeTaskEnd marks the end of one (task, attempt) for the receiver (request).
	TypeTaskEnd
	// TypeControl carries a control message such as seal or close (request).
	TypeControl
	// TypeAck accepts a request; its payload, if any, is request-specific.
	TypeAck
	// TypeBusy asks the sender to retry later; payload: EncodeBusy.
	TypeBusy
	// TypeRefused rejects a request for good; payload: EncodeRefusal.
	TypeRefused
	// TypeRead asks for data streamed back (an output partition read from
	// its owner) (request).
	TypeRead
	// TypeData is one frame of a streamed reply; the final reply follows.
	TypeData
)

// Known reports whether t is a frame type defined by this package.
func (t Type) Known() bool { return t >= TypeShards && t <= TypeData }

// String returns the type's name, or "type(N)" for an unknown type.
func (t Type) String() string {
	names := [...]string{"", "shards", "task-end", "control", "ack", "busy", "refused", "read", "data"}
	if t.Known() {
		return names[t]
	}
	return fmt.Sprintf("type(%d)", uint8(t))
}

// Frame is one decoded frame.
type Frame struct {
	// Type is the frame type; it may be unknown (see Type.Known).
	Type Type
	// Flags are reserved; writers send 0, readers ignore them.
	Flags uint16
	// Payload is the frame body. From DecodeFrame it aliases the input.
	Payload []byte
}

// AppendFrame appends a frame of type t with the given payload (flags 0) to
// dst and returns the extended slice. The payload must be shorter than 4 GiB.
func AppendFrame(dst []byte, t Type, payload []byte) []byte {
	start := len(dst)
	dst = appendHeader(dst, t, len(payload))
	dst = append(dst, payload...)
	sum := crc32.Update(0, castagnoli, dst[start:start+8])
	sum = crc32.Update(sum, castagnoli, payload)
	binary.LittleEndian.PutUint32(dst[start+8:], sum)
	return dst
}

// appendHeader appends a header with a zero checksum.
func appendHeader(dst []byte, t Type, n int) []byte {
	dst = append(dst, Version, byte(t), 0, 0)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
	return binary.LittleEndian.AppendUint32(dst, 0)
}

// WriteFrame writes one frame to w. Payloads up to 16 KiB are copied next to
// the header and written with one Write call; larger ones are written after
// the header without a copy. An error leaves the stream in an unknown state:
// close it. WriteFrame is not safe for concurrent use on the same w.
func WriteFrame(w io.Writer, t Type, payload []byte) error {
	if uint64(len(payload)) > math.MaxUint32 {
		return fmt.Errorf("%w: %d bytes", ErrTooLarge, len(payload))
	}
	if len(payload) <= smallFrame {
		_, err := w.Write(AppendFrame(make([]byte, 0, HeaderSize+len(payload)), t, payload))
		return err
	}
	hdr := appendHeader(make([]byte, 0, HeaderSize), t, len(payload))
	sum := crc32.Update(0, castagnoli, hdr[:8])
	binary.LittleEndian.PutUint32(hdr[8:], crc32.Update(sum, castagnoli, payload))
	if _, err := w.Write(hdr); err != nil {
		return err
	}
	_, err := w.Write(payload)
	return err
}

// WriteFrameParts writes one frame whose payload is the concatenation of
// parts, without joining them first: small parts are gathered with the
// header into writes of up to 64 KiB, parts of 32 KiB or more are written in
// place. Errors as WriteFrame's.
func WriteFrameParts(w io.Writer, t Type, parts [][]byte) error {
	return WriteFramePayload(w, t, Payload{Parts: parts})
}

// Payload is a frame's payload in parts, with the CRC-32C of some runs of
// them already known (a shard entry's data, summed when it was cut): the
// frame's CRC is combined from those instead of read from their bytes
// again. A known CRC that is wrong makes a frame the receiver rejects.
type Payload struct {
	Parts [][]byte
	Known []KnownCRC // by First, ascending, not overlapping
}

// KnownCRC says that parts [First, First+Count) of a Payload, Len bytes
// together, have the CRC-32C Sum.
type KnownCRC struct {
	First, Count, Len int
	Sum               uint32
}

// Len returns the payload's size in bytes.
func (p Payload) Len() int {
	n := 0
	for _, b := range p.Parts {
		n += len(b)
	}
	return n
}

// crc returns the CRC-32C of hdr (the header's first 8 bytes) then the
// payload.
func (p Payload) crc(hdr []byte) uint32 {
	sum := crc32.Update(0, castagnoli, hdr)
	k := 0
	for i := 0; i < len(p.Parts); {
		if k < len(p.Known) && p.Known[k].First == i {
			sum = CombineCRC(sum, p.Known[k].Sum, p.Known[k].Len)
			i += p.Known[k].Count
			k++
			continue
		}
		sum = crc32.Update(sum, castagnoli, p.Parts[i])
		i++
	}
	return sum
}

// WriteFramePayload is WriteFrameParts of p's parts, its CRC combined from
// those p knows.
func WriteFramePayload(w io.Writer, t Type, p Payload) error {
	n := p.Len()
	if uint64(n) > math.MaxUint32 {
		return fmt.Errorf("%w: %d bytes", ErrTooLarge, n)
	}
	g := gatherPool.Get().(*gatherWriter)
	defer gatherPool.Put(g)
	g.w, g.buf = w, appendHeader(g.buf[:0], t, n)
	binary.LittleEndian.PutUint32(g.buf[8:], p.crc(g.buf[:8]))
	for _, b := range p.Parts {
		if err := g.write(b); err != nil {
			return err
		}
	}
	err := g.flush()
	g.w = nil
	return err
}

// Sizes of WriteFrameParts' writes.
const (
	gatherBytes = 64 << 10 // the most it gathers into one write
	inPlace     = 32 << 10 // parts this large are written as they are
)

// gatherWriter gathers small writes to w into buf.
type gatherWriter struct {
	w   io.Writer
	buf []byte
}

var gatherPool = sync.Pool{New: func() any { return &gatherWriter{buf: make([]byte, 0, gatherBytes)} }}

func (g *gatherWriter) write(p []byte) error {
	if len(p) >= inPlace {
		if err := g.flush(); err != nil {
			return err
		}
		_, err := g.w.Write(p)
		return err
	}
	if len(g.buf)+len(p) > gatherBytes {
		if err := g.flush(); err != nil {
			return err
		}
	}
	g.buf = append(g.buf, p...)
	return nil
}

func (g *gatherWriter) flush() error {
	if len(g.buf) == 0 {
		return nil
	}
	_, err := g.w.Write(g.buf)
	g.buf = g.buf[:0]
	return err
}

// ReadFrame reads one frame from r. It checks the version and the payload
// length against maxPayload (<= 0 means DefaultMaxPayload) before it
// allocates, so it never allocates more than HeaderSize+maxPayload bytes,
// then checks the CRC. A frame of an unknown type is returned without error.
// At a clean end of stream it returns io.EOF; inside a frame, an error
// matching both ErrShortFrame and io.ErrUnexpectedEOF.
func ReadFrame(r io.Reader, maxPayload int) (Frame, error) {
	h, err := ReadHeader(r, maxPayload)
	if err != nil {
		return Frame{}, err
	}
	return h.ReadPayload(r)
}

// Header is a frame header whose version and length were checked: a
// reader can decide what to do before it reads (and holds) the payload.
type Header struct {
	raw [HeaderSize]byte
	// Len is the payload length (at most the limit ReadHeader was given).
	Len int
}

// ReadHeader reads and checks one frame header. Its errors are ReadFrame's
// for the header: io.EOF at a clean end of stream, ErrShortFrame,
// ErrVersion, ErrTooLarge.
func ReadHeader(r io.Reader, maxPayload int) (Header, error) {
	var h Header
	if _, err := io.ReadFull(r, h.raw[:]); err != nil {
		return Header{}, shortErr(err)
	}
	var err error
	h.Len, err = checkHeader(h.raw[:], maxPayload)
	return h, err
}

// ReadPayload reads the payload that follows h and checks the frame's
// checksum (ErrShortFrame, ErrChecksum).
func (h Header) ReadPayload(r io.Reader) (Frame, error) {
	payload, err := readPayload(r, h.Len)
	if err != nil {
		return Frame{}, shortErr(noEOF(err))
	}
	return finish(h.raw[:], payload)
}

// ReadPayloadReserved is ReadPayload for a caller that has already reserved
// h.Len bytes of memory for the frame (an admission budget): it allocates
// the payload at once instead of growing it as data arrives, so a large
// frame costs one allocation and no copy. The payload is the caller's to
// keep.
func (h Header) ReadPayloadReserved(r io.Reader) (Frame, error) {
	payload := newPayload(int(h.Len))
	sum, err := readCRC(r, payload, h.raw[:8])
	if err != nil {
		Recycle(payload)
		return Frame{}, shortErr(noEOF(err))
	}
	return checked(h.raw[:], payload, sum)
}

// readCRC fills b from r as io.ReadFull does and returns the CRC-32C of
// hdr then b, summing each read's bytes as they land, while they are in
// the cache: a second pass over a payload of megabytes read them back from
// memory.
func readCRC(r io.Reader, b, hdr []byte) (uint32, error) {
	sum := crc32.Update(0, castagnoli, hdr)
	for off := 0; off < len(b); {
		n, err := r.Read(b[off:])
		sum = crc32.Update(sum, castagnoli, b[off:off+n])
		off += n
		switch {
		case off == len(b):
		case err == io.EOF && off > 0:
			return 0, io.ErrUnexpectedEOF
		case err != nil:
			return 0, err
		}
	}
	return sum, nil
}

// Payload buffers of at least minPooled bytes come from a pool of
// power-of-two sizes up to maxPooled, to which Recycle returns them.
const (
	minPooledShift = 16 // 64 KiB
	maxPooledShift = 26 // 64 MiB
)

// payloadPools hold recycled payload buffers by size class.
var payloadPools [maxPooledShift + 1]sync.Pool

// newPayload returns a buffer of n bytes, recycled if one is pooled. Its
// bytes are not zeroed: the caller overwrites all n.
func newPayload(n int) []byte {
	shift := bits.Len(uint(n - 1))
	if n < 1<<minPooledShift || shift > maxPooledShift {
		return make([]byte, n)
	}
	if b, ok := payloadPools[shift].Get().(*[]byte); ok {
		return (*b)[:n]
	}
	return make([]byte, n, 1<<shift)
}

// Recycle gives back a payload that ReadPayloadReserved returned (other
// buffers are ignored), to be reused for a later frame. The caller must be
// the payload's only holder and must not touch it, nor any slice of it,
// afterwards: whoever still held a slice would see another frame's bytes.
// A handler that copied everything it needs out of a frame may recycle it.
func Recycle(b []byte) {
	c := cap(b)
	shift := bits.Len(uint(c)) - 1
	if c == 0 || c != 1<<shift || shift < minPooledShift || shift > maxPooledShift {
		return
	}
	b = b[:0]
	payloadPools[shift].Put(&b)
}

// JoinPayload returns the concatenation of parts in a payload buffer, as
// ReadPayloadReserved would have read it from a stream: the frame's handler
// may Recycle it. A request a node makes to itself uses it, so that its
// payloads come from the pool as the network's do.
func JoinPayload(parts [][]byte) []byte {
	out := newPayload(Payload{Parts: parts}.Len())[:0]
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// SkipPayload reads and drops the payload that follows h without holding
// it in memory, so that the stream can carry a reply.
func (h Header) SkipPayload(r io.Reader) error {
	_, err := io.CopyN(io.Discard, r, int64(h.Len))
	return shortErr(noEOF(err))
}

// readChunk bounds what readPayload allocates ahead of the bytes that
// actually arrived, so a peer that claims a large frame and then stalls
// costs at most this much.
const readChunk = 1 << 20

// readPayload reads n bytes, growing the buffer as data arrives.
func readPayload(r io.Reader, n int) ([]byte, error) {
	if n <= readChunk {
		b := make([]byte, n)
		_, err := io.ReadFull(r, b)
		return b, err
	}
	b := make([]byte, 0, readChunk)
	for len(b) < n {
		if len(b) == cap(b) {
			b = slices.Grow(b, min(cap(b), n-len(b)))
		}
		m, err := io.ReadFull(r, b[len(b):min(cap(b), n)])
		b = b[:len(b)+m]
		if err != nil {
			return b, err
		}
	}
	return b, nil
}

// DecodeFrame decodes the frame at the start of b and returns it with the
// bytes after it (on error, rest is b). f.Payload aliases b, with its
// capacity cut to its length. If b holds only part of a frame it
// returns ErrShortFrame (and no other error) so the caller can append more
// bytes and try again; a bad version or an over-limit length is reported as
// soon as the header bytes that show it are present. maxPayload <= 0 means
// DefaultMaxPayload.
func DecodeFrame(b []byte, maxPayload int) (f Frame, rest []byte, err error) {
	if len(b) < HeaderSize {
		return Frame{}, b, partialHeader(b, maxPayload)
	}
	n, err := checkHeader(b, maxPayload)
	if err != nil {
		return Frame{}, b, err
	}
	if len(b)-HeaderSize < n {
		return Frame{}, b, fmt.Errorf("%w: have %d of %d bytes", ErrShortFrame, len(b), HeaderSize+n)
	}
	f, err = finish(b[:HeaderSize], b[HeaderSize:HeaderSize+n:HeaderSize+n])
	if err != nil {
		return Frame{}, b, err
	}
	return f, b[HeaderSize+n:], nil
}

// partialHeader reports the most specific error for fewer than HeaderSize bytes.
func partialHeader(b []byte, maxPayload int) error {
	if len(b) >= 1 && b[0] != Version {
		return fmt.Errorf("%w: %d", ErrVersion, b[0])
	}
	if len(b) >= 8 {
		if _, err := checkHeader(b, maxPayload); err != nil {
			return err
		}
	}
	return fmt.Errorf("%w: have %d of %d header bytes", ErrShortFrame, len(b), HeaderSize)
}

// checkHeader validates the version and length (bytes 0..7) and returns the
// payload length.
func checkHeader(hdr []byte, maxPayload int) (int, error) {
	if hdr[0] != Version {
		return 0, fmt.Errorf("%w: %d", ErrVersion, hdr[0])
	}
	if maxPayload <= 0 {
		maxPayload = DefaultMaxPayload
	}
	n := binary.LittleEndian.Uint32(hdr[4:8])
	if uint64(n) > uint64(maxPayload) {
		return 0, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, n, maxPayload)
	}
	return int(n), nil
}

// finish checks the CRC of a validated header and its payload.
func finish(hdr, payload []byte) (Frame, error) {
	sum := crc32.Update(0, castagnoli, hdr[:8])
	return checked(hdr, payload, crc32.Update(sum, castagnoli, payload))
}

// checked is finish of a frame whose CRC was taken: sum.
func checked(hdr, payload []byte, sum uint32) (Frame, error) {
	if want := binary.LittleEndian.Uint32(hdr[8:12]); sum != want {
		return Frame{}, fmt.Errorf("%w: got %08x, header says %08x", ErrChecksum, sum, want)
	}
	f := Frame{Type: Type(hdr[1]), Flags: binary.LittleEndian.Uint16(hdr[2:4]), Payload: payload}
	return f, nil
}

// noEOF turns io.EOF inside a frame into io.ErrUnexpectedEOF.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// shortErr marks a truncated frame with ErrShortFrame, leaving io.EOF (a
// clean end of stream) and other reader errors unchanged.
func shortErr(err error) error {
	if err == io.ErrUnexpectedEOF {
		return fmt.Errorf("%w: %w", ErrShortFrame, err)
	}
	return err
}
