package table

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// freeCounter is the allocator of an owner buffer: it counts its frees.
type freeCounter struct{ frees int }

func (f *freeCounter) Allocate(int) []byte           { panic("not used") }
func (f *freeCounter) Reallocate(int, []byte) []byte { panic("not used") }
func (f *freeCounter) Free([]byte)                   { f.frees++ }

// TestDecodeMessageBuffer: a record decoded over an owner buffer holds it
// until the record is released (an uncompressed, aligned body), or not at
// all (a compressed or misaligned body, decoded into new buffers; a
// corrupt message); either way the owner is freed exactly once, after its
// last reference, and the record has the rows encoded.
func TestDecodeMessageBuffer(t *testing.T) {
	mem := checkedMem(t)
	schema := allSchema()
	rec := randomRecord(mem, schema, 500, rand.New(rand.NewPCG(3, 4)), 0.2)
	defer rec.Release()
	for _, comp := range []Compression{NoCompression, Zstd} {
		c, err := NewCodecWithConfig(schema, mem, CodecConfig{Compression: comp})
		if err != nil {
			t.Fatal(err)
		}
		b, err := c.AppendRecord(nil, rec)
		if err != nil {
			t.Fatal(err)
		}
		meta, body, err := splitMessage(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, shift := range []int{0, 1} {
			holds := comp == NoCompression && shift == 0
			name := map[Compression]string{NoCompression: "none", Zstd: "zstd"}[comp]
			t.Run(name+map[int]string{0: "/aligned", 1: "/misaligned"}[shift], func(t *testing.T) {
				f := &freeCounter{}
				owned := make([]byte, len(body)+8)[shift : shift+len(body)]
				copy(owned, body)
				owner := memory.NewBufferWithAllocator(owned, f)
				got, err := c.DecodeMessageBuffer(meta, owner)
				owner.Release()
				if err != nil {
					t.Fatal(err)
				}
				if want := map[bool]int{true: 0, false: 1}[holds]; f.frees != want {
					t.Fatalf("%d frees while the record is alive, want %d", f.frees, want)
				}
				sameRecords(t, rec, got)
				got.Release()
				if f.frees != 1 {
					t.Fatalf("%d frees after the record was released, want 1", f.frees)
				}
			})
		}
	}
	t.Run("corrupt", func(t *testing.T) {
		c, _ := NewCodec(schema, mem)
		b, _ := c.AppendRecord(nil, rec)
		meta, body, _ := splitMessage(b)
		f := &freeCounter{}
		owner := memory.NewBufferWithAllocator(body[:len(body)/2], f)
		if got, err := c.DecodeMessageBuffer(meta, owner); err == nil {
			got.Release()
			t.Fatal("a truncated body decoded")
		}
		owner.Release()
		if f.frees != 1 {
			t.Fatalf("%d frees of a corrupt message's owner, want 1", f.frees)
		}
	})
}
