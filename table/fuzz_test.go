package table

import (
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// fuzzSeeds returns real encoded batches of allSchema: plain, with nulls,
// sliced, empty, and compressed.
func fuzzSeeds(t testing.TB) [][]byte {
	mem := memory.NewGoAllocator()
	schema := allSchema()
	rng := rand.New(rand.NewPCG(20, 21))
	rec := randomRecord(mem, schema, 40, rng, 0.2)
	defer rec.Release()
	var seeds [][]byte
	for _, comp := range []Compression{NoCompression, LZ4, Zstd} {
		c, err := NewCodecWithConfig(schema, mem, CodecConfig{Compression: comp})
		if err != nil {
			t.Fatal(err)
		}
		for _, sl := range [][2]int64{{0, 40}, {3, 11}, {0, 0}} {
			r := rec.NewSlice(sl[0], sl[1])
			b, err := c.AppendRecord(nil, r)
			r.Release()
			if err != nil {
				t.Fatal(err)
			}
			seeds = append(seeds, b)
		}
	}
	return seeds
}

// FuzzCodecDecode feeds arbitrary bytes to Decode: it must never panic, and
// whatever it accepts must be usable by the rest of the package.
func FuzzCodecDecode(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	schema := allSchema()
	c, err := NewCodecWithConfig(schema, nil, CodecConfig{MaxDecodedBytes: 1 << 20})
	if err != nil {
		f.Fatal(err)
	}
	var cols []string
	for _, fl := range schema.Fields() {
		cols = append(cols, fl.Name)
	}
	part, err := NewPartitioner(schema, Rule{Kind: Hash, Columns: cols}, 5)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkOwnedDecode(t, c, b)
		rec, err := c.Decode(b)
		if err != nil {
			return
		}
		defer rec.Release()
		exercise(t, c, part, rec)
	})
}

// checkOwnedDecode decodes b's parts with DecodeMessageBuffer, as a pooled
// Flight reader does: it accepts what Decode accepts, and frees the owner
// exactly once, after the record (if any) is released.
func checkOwnedDecode(t *testing.T, c *Codec, b []byte) {
	meta, body, err := splitMessage(b)
	if err != nil {
		return
	}
	f := &freeCounter{}
	owner := memory.NewBufferWithAllocator(append([]byte(nil), body...), f)
	rec, err := c.DecodeMessageBuffer(meta, owner)
	owner.Release()
	if err == nil {
		rec.Release()
	}
	if f.frees != 1 {
		t.Fatalf("owner freed %d times, want 1 (decode error %v)", f.frees, err)
	}
}

// exercise partitions, splits, re-encodes and re-decodes a decoded record.
func exercise(t *testing.T, c *Codec, part *Partitioner, rec arrow.Record) {
	pids, err := part.Partition(rec, nil)
	if err != nil {
		t.Fatal(err)
	}
	groups, err := Split(nil, rec, pids, []int{0, 1, 2, 0, 1}, 3)
	if err != nil {
		t.Fatal(err)
	}
	ReleaseGroups(groups)
	b, err := c.AppendRecord(nil, rec)
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Decode(b)
	if err != nil {
		t.Fatalf("re-decoding an accepted record: %v", err)
	}
	sameRecords(t, rec, again)
	again.Release()
}

// FuzzSchemaFromBytes feeds arbitrary bytes to SchemaFromBytes: it must
// never panic.
func FuzzSchemaFromBytes(f *testing.F) {
	for _, s := range []*arrow.Schema{allSchema(), GenSchema()} {
		c, err := NewCodec(s, nil)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(c.SchemaBytes())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, err := SchemaFromBytes(b); err == nil && s == nil {
			t.Fatal("nil schema without error")
		}
	})
}

// TestDecodeMutations is a deterministic miniature of FuzzCodecDecode that
// runs with every go test: seeds with a few random bytes overwritten must
// decode to a usable record or give an error, never panic.
func TestDecodeMutations(t *testing.T) {
	seeds := fuzzSeeds(t)
	schema := allSchema()
	c, err := NewCodecWithConfig(schema, nil, CodecConfig{MaxDecodedBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	var cols []string
	for _, fl := range schema.Fields() {
		cols = append(cols, fl.Name)
	}
	part, _ := NewPartitioner(schema, Rule{Kind: Hash, Columns: cols}, 5)
	rng := rand.New(rand.NewPCG(22, 23))
	accepted := 0
	for range 1500 {
		s := append([]byte(nil), seeds[rng.IntN(len(seeds))]...)
		for range 1 + rng.IntN(4) {
			s[rng.IntN(len(s))] = byte(rng.Uint32())
		}
		if rec, err := c.Decode(s); err == nil {
			accepted++
			exercise(t, c, part, rec)
			rec.Release()
		}
	}
	t.Logf("%d of 1500 mutated messages decoded", accepted)
}
