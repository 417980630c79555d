package wire

import (
	"bytes"
	"testing"
)

// benchAppendDecode encodes and decodes one frame per iteration into a
// reused buffer (no allocation).
func benchAppendDecode(b *testing.B, size int) {
	p := payload(size)
	buf := make([]byte, 0, HeaderSize+size)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendFrame(buf[:0], TypeShards, p)
		if _, _, err := DecodeFrame(buf, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
}

// benchWriteRead writes and reads one frame per iteration through a
// bytes.Buffer, as on a stream (ReadFrame allocates each payload).
func benchWriteRead(b *testing.B, size int) {
	p := payload(size)
	var buf bytes.Buffer
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := WriteFrame(&buf, TypeShards, p); err != nil {
			b.Fatal(err)
		}
		if _, err := ReadFrame(&buf, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
}

func BenchmarkAppendDecode1MiB(b *testing.B) { benchAppendDecode(b, 1<<20) }
func BenchmarkAppendDecode64B(b *testing.B)  { benchAppendDecode(b, 64) }
func BenchmarkWriteRead1MiB(b *testing.B)    { benchWriteRead(b, 1<<20) }
func BenchmarkWriteRead64B(b *testing.B)     { benchWriteRead(b, 64) }

func BenchmarkCodec(b *testing.B) {
	var e Encoder
	m := samples["small"]
	b.ReportAllocs()
	for b.Loop() {
		e.Reset()
		m.encode(&e)
		d := NewDecoder(e.Bytes(), 0)
		d.Uvarint()
		d.Varint()
		d.Uint32()
		d.Uint64()
		d.Blob()
		d.Blob()
		d.Bool()
		if err := d.Err(); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(e.Len()))
}
