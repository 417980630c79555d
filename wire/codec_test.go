package wire

import (
	"bytes"
	"errors"
	"math"
	"testing"
)

// sample is a message exercising every field kind.
type sample struct {
	u    uint64
	v    int64
	u32  uint32
	u64  uint64
	blob []byte
	s    string
	ok   bool
	list []uint64
}

func (m sample) encode(e *Encoder) {
	e.Uvarint(m.u)
	e.Varint(m.v)
	e.Uint32(m.u32)
	e.Uint64(m.u64)
	e.Blob(m.blob)
	e.String(m.s)
	e.Bool(m.ok)
	e.Uvarint(uint64(len(m.list)))
	for _, x := range m.list {
		e.Uvarint(x)
	}
}

func decodeSample(d *Decoder) sample {
	m := sample{u: d.Uvarint(), v: d.Varint(), u32: d.Uint32(), u64: d.Uint64(),
		blob: d.Blob(), s: d.String(), ok: d.Bool()}
	n := d.Count(1000)
	for range n {
		m.list = append(m.list, d.Uvarint())
	}
	return m
}

func (m sample) equal(o sample) bool {
	return m.u == o.u && m.v == o.v && m.u32 == o.u32 && m.u64 == o.u64 &&
		bytes.Equal(m.blob, o.blob) && m.s == o.s && m.ok == o.ok && equalU64(m.list, o.list)
}

func equalU64(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

var samples = map[string]sample{
	"zero":  {},
	"small": {u: 1, v: -1, u32: 2, u64: 3, blob: []byte("ab"), s: "shuffle-1", ok: true, list: []uint64{4, 5}},
	"edges": {u: math.MaxUint64, v: math.MinInt64, u32: math.MaxUint32, u64: math.MaxUint64,
		blob: bytes.Repeat([]byte{0xff}, 300), s: "ünïcode", list: []uint64{0, math.MaxUint64}},
	"max int": {v: math.MaxInt64},
}

func TestCodecRoundTrip(t *testing.T) {
	for name, m := range samples {
		t.Run(name, func(t *testing.T) {
			e := NewEncoder([]byte("hdr"))
			m.encode(e)
			d := NewDecoder(e.Bytes()[3:], 1024)
			if got := decodeSample(d); d.Done() != nil || !got.equal(m) {
				t.Fatalf("got %+v, err %v", got, d.Err())
			}
		})
	}
}

func TestCodecTruncated(t *testing.T) {
	var e Encoder
	samples["edges"].encode(&e)
	b := e.Bytes()
	for n := range len(b) {
		d := NewDecoder(b[:n], 1024)
		decodeSample(d)
		if err := d.Done(); !errors.Is(err, ErrMalformed) {
			t.Fatalf("%d of %d bytes: %v", n, len(b), err)
		}
	}
}

func TestDecoderRefusals(t *testing.T) {
	enc := func(f func(e *Encoder)) []byte {
		var e Encoder
		f(&e)
		return e.Bytes()
	}
	cases := []struct {
		name string
		b    []byte
		read func(d *Decoder)
	}{
		{"blob over maxLen", enc(func(e *Encoder) { e.Blob(make([]byte, 17)) }), func(d *Decoder) { d.Blob() }},
		{"blob over input", []byte{5, 1, 2}, func(d *Decoder) { d.Blob() }},
		{"huge blob length", enc(func(e *Encoder) { e.Uvarint(math.MaxUint64) }), func(d *Decoder) { _ = d.String() }},
		{"count over limit", enc(func(e *Encoder) { e.Uvarint(4); e.Uint32(0) }), func(d *Decoder) { d.Count(3) }},
		{"count over input", []byte{3, 0, 0}, func(d *Decoder) { d.Count(0) }},
		{"bool 2", []byte{2}, func(d *Decoder) { d.Bool() }},
		{"varint overflow", bytes.Repeat([]byte{0xff}, 11), func(d *Decoder) { d.Varint() }},
		{"uvarint overflow", bytes.Repeat([]byte{0x80}, 11), func(d *Decoder) { d.Uvarint() }},
		{"short uint32", []byte{1, 2, 3}, func(d *Decoder) { d.Uint32() }},
		{"short uint64", []byte{1, 2, 3, 4, 5, 6, 7}, func(d *Decoder) { d.Uint64() }},
		{"trailing", []byte{1, 2}, func(d *Decoder) { d.Uvarint() }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := NewDecoder(tc.b, 16)
			tc.read(d)
			if err := d.Done(); !errors.Is(err, ErrMalformed) {
				t.Fatalf("err %v", err)
			}
		})
	}
}

func TestDecoderSticky(t *testing.T) {
	d := NewDecoder([]byte{2, 7, 7}, 0)
	d.Bool()
	first := d.Err()
	if first == nil || d.Uvarint() != 0 || d.Blob() != nil || d.Err() != first || d.Done() != first {
		t.Fatalf("error not sticky: %v then %v", first, d.Err())
	}
	if d.Remaining() != 3 {
		t.Fatalf("remaining %d after a refused read", d.Remaining())
	}
}

func TestBlobAliases(t *testing.T) {
	in := []byte{2, 'a', 'b', 9}
	d := NewDecoder(in, 0)
	b := d.Blob()
	in[1] = 'z'
	if string(b) != "zb" || cap(b) != 2 || d.Remaining() != 1 {
		t.Fatalf("blob %q cap %d remaining %d", b, cap(b), d.Remaining())
	}
}

func TestEncoderReset(t *testing.T) {
	var e Encoder
	e.String("hello")
	c := cap(e.Bytes())
	e.Reset()
	e.Bool(true)
	if e.Len() != 1 || cap(e.Bytes()) != c {
		t.Fatalf("len %d cap %d", e.Len(), cap(e.Bytes()))
	}
}
