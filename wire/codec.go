package wire

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// Encoder appends the fields of a message body to a buffer. The zero value
// is ready to use. Field encodings: Uvarint/Varint as encoding/binary
// varints, Uint32/Uint64 fixed little-endian, Blob and String a uvarint
// length then the bytes, Bool one byte 0 or 1. An Encoder is not safe for
// concurrent use.
type Encoder struct{ buf []byte }

// NewEncoder returns an Encoder that appends to dst (which may be nil), so a
// caller can reuse a buffer or encode after bytes it already holds.
func NewEncoder(dst []byte) *Encoder { return &Encoder{buf: dst} }

// Grow makes room for n more bytes, so that the fields appended next do
// not grow the buffer a few times over.
func (e *Encoder) Grow(n int) { e.buf = slices.Grow(e.buf, n) }

// Uvarint appends v as an unsigned varint.
func (e *Encoder) Uvarint(v uint64) { e.buf = binary.AppendUvarint(e.buf, v) }

// Varint appends v as a zig-zag signed varint.
func (e *Encoder) Varint(v int64) { e.buf = binary.AppendVarint(e.buf, v) }

// Uint32 appends v as 4 little-endian bytes.
func (e *Encoder) Uint32(v uint32) { e.buf = binary.LittleEndian.AppendUint32(e.buf, v) }

// Uint64 appends v as 8 little-endian bytes.
func (e *Encoder) Uint64(v uint64) { e.buf = binary.LittleEndian.AppendUint64(e.buf, v) }

// Blob appends b with a uvarint length prefix. (It is not called Bytes
// because Bytes returns the encoded buffer.)
func (e *Encoder) Blob(b []byte) {
	e.Uvarint(uint64(len(b)))
	e.buf = append(e.buf, b...)
}

// AlignedBlob appends b with a uvarint length prefix and zero padding, so
// that b starts at a multiple of align from the start of the buffer: a
// decoder can then hand out data that needs alignment (Arrow buffers) without
// copying it, provided the decoded input starts aligned too.
func (e *Encoder) AlignedBlob(b []byte, align int) {
	e.Uvarint(uint64(len(b)))
	e.buf = append(e.buf, make([]byte, padding(len(e.buf), align))...)
	e.buf = append(e.buf, b...)
}

// String appends s with a uvarint length prefix.
func (e *Encoder) String(s string) {
	e.Uvarint(uint64(len(s)))
	e.buf = append(e.buf, s...)
}

// Bool appends 1 for true, 0 for false.
func (e *Encoder) Bool(v bool) {
	b := byte(0)
	if v {
		b = 1
	}
	e.buf = append(e.buf, b)
}

// Bytes returns the encoded bytes. The slice aliases the Encoder's buffer
// until the next append or Reset.
func (e *Encoder) Bytes() []byte { return e.buf }

// Len returns the number of encoded bytes.
func (e *Encoder) Len() int { return len(e.buf) }

// Reset empties the buffer, keeping its capacity.
func (e *Encoder) Reset() { e.buf = e.buf[:0] }

// Decoder reads the fields an Encoder wrote, with bounds checks. The first
// error is sticky: later reads return zero values and Err keeps reporting
// it, so a caller may read every field and check Err (or Done) once. A
// Decoder is not safe for concurrent use.
type Decoder struct {
	b      []byte
	off    int
	maxLen int
	err    error
}

// NewDecoder returns a Decoder over b. maxLen bounds every Blob, String and
// Count (<= 0: only the remaining input bounds them).
func NewDecoder(b []byte, maxLen int) *Decoder {
	return &Decoder{b: b, maxLen: maxLen}
}

// fail records the first error.
func (d *Decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: bad %s at offset %d of %d", ErrMalformed, what, d.off, len(d.b))
	}
}

// Uvarint reads an unsigned varint.
func (d *Decoder) Uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b[d.off:])
	if n <= 0 {
		d.fail("uvarint")
		return 0
	}
	d.off += n
	return v
}

// Varint reads a signed varint.
func (d *Decoder) Varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b[d.off:])
	if n <= 0 {
		d.fail("varint")
		return 0
	}
	d.off += n
	return v
}

// take returns the next n bytes, or nil after recording an error.
func (d *Decoder) take(n int, what string) []byte {
	if d.err != nil {
		return nil
	}
	if n > len(d.b)-d.off {
		d.fail(what)
		return nil
	}
	s := d.b[d.off : d.off+n : d.off+n]
	d.off += n
	return s
}

// Uint32 reads 4 little-endian bytes.
func (d *Decoder) Uint32() uint32 {
	if s := d.take(4, "uint32"); s != nil {
		return binary.LittleEndian.Uint32(s)
	}
	return 0
}

// Uint64 reads 8 little-endian bytes.
func (d *Decoder) Uint64() uint64 {
	if s := d.take(8, "uint64"); s != nil {
		return binary.LittleEndian.Uint64(s)
	}
	return 0
}

// length reads a uvarint length and checks it against maxLen and the bytes left.
func (d *Decoder) length(what string) int {
	n := d.Uvarint()
	if d.err != nil {
		return 0
	}
	if n > uint64(d.Remaining()) || (d.maxLen > 0 && n > uint64(d.maxLen)) {
		d.fail(what + " length")
		return 0
	}
	return int(n)
}

// Blob reads a length-prefixed byte string. The result aliases the input;
// it is refused (ErrMalformed) if longer than maxLen or the bytes left.
func (d *Decoder) Blob() []byte {
	n := d.length("blob")
	return d.take(n, "blob")
}

// AlignedBlob reads what Encoder.AlignedBlob wrote: a length, zero padding
// up to the next multiple of align from the start of the input, then the
// bytes (aliasing the input). Non-zero padding is ErrMalformed.
func (d *Decoder) AlignedBlob(align int) []byte {
	n := d.length("blob")
	for _, b := range d.take(padding(d.off, align), "blob padding") {
		if b != 0 {
			d.fail("blob padding")
		}
	}
	return d.take(n, "blob")
}

// padding is the number of bytes from off to the next multiple of align.
func padding(off, align int) int {
	if align <= 1 {
		return 0
	}
	return (align - off%align) % align
}

// String reads a length-prefixed string (a copy), with Blob's limits.
// Because of this method a *Decoder is a fmt.Stringer: do not pass one to a
// print or log function, which would consume a field.
func (d *Decoder) String() string {
	return string(d.Blob())
}

// Count reads a uvarint element count for a list whose elements each take at
// least one byte: it is refused if greater than the bytes left or than limit
// (<= 0: no extra bound besides maxLen). Use it before allocating a slice
// of that many elements.
func (d *Decoder) Count(limit int) int {
	n := d.length("count")
	if limit > 0 && n > limit {
		d.fail("count")
		return 0
	}
	return n
}

// Bool reads one byte that must be 0 or 1.
func (d *Decoder) Bool() bool {
	s := d.take(1, "bool")
	if s == nil {
		return false
	}
	if s[0] > 1 {
		d.off--
		d.fail("bool")
		return false
	}
	return s[0] == 1
}

// Err returns the first error, matching ErrMalformed, or nil.
func (d *Decoder) Err() error { return d.err }

// Remaining returns the number of unread bytes.
func (d *Decoder) Remaining() int { return len(d.b) - d.off }

// Done returns Err, or an ErrMalformed error if bytes are left unread.
func (d *Decoder) Done() error {
	if d.err == nil && d.Remaining() > 0 {
		d.err = fmt.Errorf("%w: %d trailing bytes", ErrMalformed, d.Remaining())
	}
	return d.err
}

// Vec encodes a message body in parts: fields are encoded into small
// segments, as an Encoder does, while blobs added with AlignedBlobParts are
// kept by reference, so a large payload can be written to a stream without
// first being copied into one buffer. Joined, the parts are exactly what an
// Encoder would have produced with AlignedBlob. The zero value is ready to
// use; a Vec is not safe for concurrent use, and the blobs must not change
// until the parts are written.
type Vec struct {
	Encoder
	parts [][]byte
	n     int        // bytes in parts
	known []KnownCRC // blobs added with their CRC
}

// Len returns the number of bytes encoded so far.
func (v *Vec) Len() int { return v.n + len(v.buf) }

// AlignedBlobParts appends the blob made of parts (in order) as AlignedBlob
// would, with the padding computed from the start of the whole message.
func (v *Vec) AlignedBlobParts(parts [][]byte, align int) {
	v.alignedBlob(parts, align)
}

// AlignedBlobPartsCRC is AlignedBlobParts of a blob whose CRC-32C is sum,
// which Payload then reports (see Payload).
func (v *Vec) AlignedBlobPartsCRC(parts [][]byte, align int, sum uint32) {
	first, size := v.alignedBlob(parts, align)
	if n := len(v.parts) - first; n > 0 {
		v.known = append(v.known, KnownCRC{First: first, Count: n, Len: size, Sum: sum})
	}
}

// alignedBlob appends a blob as AlignedBlobParts and returns the index of
// its first part and its size.
func (v *Vec) alignedBlob(parts [][]byte, align int) (first, size int) {
	for _, p := range parts {
		size += len(p)
	}
	v.Uvarint(uint64(size))
	v.buf = append(v.buf, make([]byte, padding(v.Len(), align))...)
	v.cut()
	first = len(v.parts)
	for _, p := range parts {
		if len(p) > 0 {
			v.parts = append(v.parts, p)
			v.n += len(p)
		}
	}
	return first, size
}

// cut ends the current segment; later fields go after it in the same
// backing array (or a new one), never over it.
func (v *Vec) cut() {
	if len(v.buf) > 0 {
		v.parts = append(v.parts, v.buf)
		v.n += len(v.buf)
		v.buf = v.buf[len(v.buf):]
	}
}

// Parts returns the encoded message in order. The Vec must not be used
// afterwards.
func (v *Vec) Parts() [][]byte {
	v.cut()
	return v.parts
}

// Payload returns the encoded message in order, with the CRCs of the blobs
// added with theirs. The Vec must not be used afterwards.
func (v *Vec) Payload() Payload {
	return Payload{Parts: v.Parts(), Known: v.known}
}

// Join returns the concatenation of parts in one new buffer.
func Join(parts [][]byte) []byte {
	out := make([]byte, 0, Payload{Parts: parts}.Len())
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// AlignedBlob is AlignedBlobParts of one blob (b is referenced, not copied).
func (v *Vec) AlignedBlob(b []byte, align int) { v.AlignedBlobParts([][]byte{b}, align) }
