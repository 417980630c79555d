package table

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func TestCodecRoundTrip(t *testing.T) {
	mem := checkedMem(t)
	schema := allSchema()
	rng := rand.New(rand.NewPCG(10, 11))
	full := randomRecord(mem, schema, 2000, rng, 0.15)
	defer full.Release()
	noNulls := randomRecord(mem, schema, 100, rng, 0)
	defer noNulls.Release()
	recs := map[string]arrow.Record{
		"full":          full,
		"no nulls":      noNulls,
		"sliced odd":    full.NewSlice(3, 1001),
		"sliced tail":   full.NewSlice(1999, 2000),
		"empty":         full.NewSlice(0, 0),
		"empty sliced":  full.NewSlice(77, 77),
		"sliced nonull": noNulls.NewSlice(9, 50),
	}
	for _, name := range []string{"sliced odd", "sliced tail", "empty", "empty sliced", "sliced nonull"} {
		defer recs[name].Release()
	}
	for _, comp := range []Compression{NoCompression, LZ4, Zstd} {
		c, err := NewCodecWithConfig(schema, mem, CodecConfig{Compression: comp})
		if err != nil {
			t.Fatal(err)
		}
		for name, rec := range recs {
			t.Run(string(comp)+"/"+name, func(t *testing.T) {
				prefix := []byte("prefix")
				b, err := c.AppendRecord(prefix, rec)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(b[:6], prefix) {
					t.Fatal("AppendRecord clobbered dst")
				}
				got, err := c.Decode(b[6:])
				if err != nil {
					t.Fatal(err)
				}
				defer got.Release()
				sameRecords(t, rec, got)
			})
		}
	}
}

func TestCodecStreamIsArrowIPC(t *testing.T) {
	// SchemaBytes + AppendRecord outputs + EOS must be readable by Arrow's
	// own stream reader.
	mem := checkedMem(t)
	c, err := NewCodec(GenSchema(), mem)
	if err != nil {
		t.Fatal(err)
	}
	var recs []arrow.Record
	stream := append([]byte(nil), c.SchemaBytes()...)
	for task := range 3 {
		rec := GenTask(mem, GenConfig{Rows: 300, Seed: 2, PayloadBytes: 7}, task, 3)
		defer rec.Release()
		recs = append(recs, rec)
		if stream, err = c.AppendRecord(stream, rec); err != nil {
			t.Fatal(err)
		}
	}
	stream = append(stream, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0)
	rd, err := ipc.NewReader(bytes.NewReader(stream), ipc.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Release()
	i := 0
	for rd.Next() {
		sameRecords(t, recs[i], rd.Record())
		i++
	}
	if rd.Err() != nil || i != 3 {
		t.Fatalf("read %d records, err %v", i, rd.Err())
	}
}

func TestSchemaBytesRoundTrip(t *testing.T) {
	mem := checkedMem(t)
	for _, schema := range []*arrow.Schema{allSchema(), GenSchema()} {
		c, err := NewCodec(schema, mem)
		if err != nil {
			t.Fatal(err)
		}
		got, err := SchemaFromBytes(c.SchemaBytes())
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equal(schema) {
			t.Fatalf("schema %v, want %v", got, schema)
		}
	}
}

func TestCodecErrors(t *testing.T) {
	mem := checkedMem(t)
	c, err := NewCodec(GenSchema(), mem)
	if err != nil {
		t.Fatal(err)
	}
	rec := GenTask(mem, GenConfig{Rows: 50, Seed: 3, PayloadBytes: 4}, 0, 1)
	defer rec.Release()
	good, err := c.AppendRecord(nil, rec)
	if err != nil {
		t.Fatal(err)
	}
	other := randomRecord(mem, allSchema(), 5, rand.New(rand.NewPCG(1, 1)), 0)
	defer other.Release()
	if _, err := c.AppendRecord(nil, other); !errors.Is(err, ErrSchemaMismatch) {
		t.Fatalf("AppendRecord of another schema: %v, want ErrSchemaMismatch", err)
	}
	oc, _ := NewCodec(allSchema(), mem)
	otherBytes, _ := oc.AppendRecord(nil, other)
	flipped := append([]byte(nil), good...)
	flipped[len(flipped)/2] ^= 0xFF
	cases := []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"short", good[:5]},
		{"truncated", good[:len(good)-8]},
		{"trailing bytes", append(append([]byte(nil), good...), 0, 0, 0, 0, 0, 0, 0, 0)},
		{"schema message", c.SchemaBytes()},
		{"other schema's batch", otherBytes},
		{"no continuation", append([]byte{1, 2, 3, 4}, good[4:]...)},
		{"huge metadata length", append([]byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F}, good[8:]...)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := c.Decode(tc.b)
			if err == nil {
				r.Release()
				t.Fatal("decoded garbage without error")
			}
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v, want ErrCorrupt", err)
			}
		})
	}
	// A flipped byte in the body may still decode (it is just data) but must
	// never panic; a CRC above this layer catches it.
	if r, err := c.Decode(flipped); err == nil {
		r.Release()
	}
}

func TestNewCodecRefusesUnsupported(t *testing.T) {
	s := arrow.NewSchema([]arrow.Field{{Name: "d", Type: arrow.FixedWidthTypes.Duration_s}}, nil)
	if _, err := NewCodec(s, nil); !errors.Is(err, ErrUnsupportedType) {
		t.Fatalf("error %v, want ErrUnsupportedType", err)
	}
	if _, err := NewCodecWithConfig(GenSchema(), nil, CodecConfig{Compression: "snappy"}); !errors.Is(err, ErrBadInput) {
		t.Fatalf("error %v, want ErrBadInput", err)
	}
}

func TestCodecIgnoresSchemaMetadata(t *testing.T) {
	mem := checkedMem(t)
	c, _ := NewCodec(GenSchema(), mem)
	rec := GenTask(mem, GenConfig{Rows: 20, Seed: 4, PayloadBytes: 3}, 0, 1)
	defer rec.Release()
	md := arrow.NewMetadata([]string{"pandas"}, []string{"{}"})
	withMeta := array.NewRecord(arrow.NewSchema(GenSchema().Fields(), &md), rec.Columns(), rec.NumRows())
	defer withMeta.Release()
	b, err := c.AppendRecord(nil, withMeta)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	sameRecords(t, rec, got)
}

func TestConcat(t *testing.T) {
	mem := checkedMem(t)
	rec := randomRecord(mem, allSchema(), 300, rand.New(rand.NewPCG(12, 13)), 0.2)
	defer rec.Release()
	parts := []arrow.Record{Slice(rec, 0, 100), Slice(rec, 100, 0), Slice(rec, 100, 200)}
	defer releaseRecords(parts)
	got, err := Concat(mem, parts)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	sameRecords(t, rec, got)
	if _, err := Concat(mem, nil); !errors.Is(err, ErrBadInput) {
		t.Fatalf("Concat(nil): %v", err)
	}
	gen := GenTask(mem, GenConfig{Rows: 3, PayloadBytes: 1}, 0, 1)
	defer gen.Release()
	if _, err := Concat(mem, []arrow.Record{rec, gen}); !errors.Is(err, ErrSchemaMismatch) {
		t.Fatalf("Concat of two schemas: %v", err)
	}
}

func TestMessageParts(t *testing.T) {
	mem := checkedMem(t)
	c, _ := NewCodec(GenSchema(), mem)
	rec := GenTask(mem, GenConfig{Rows: 10, PayloadBytes: 2}, 0, 1)
	defer rec.Release()
	b, _ := c.AppendRecord(nil, rec)
	meta, body, err := MessageParts(b)
	if err != nil {
		t.Fatal(err)
	}
	if 8+len(meta)+len(body) != len(b) || len(meta)%8 != 0 {
		t.Fatalf("meta %d + body %d bytes of %d", len(meta), len(body), len(b))
	}
}

func TestDecodeZeroCopyAndAlignment(t *testing.T) {
	mem := checkedMem(t)
	c, _ := NewCodec(GenSchema(), mem)
	rec := GenTask(mem, GenConfig{Rows: 100, Seed: 5, PayloadBytes: 9}, 0, 1)
	defer rec.Release()
	b, err := c.AppendRecord(nil, rec)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	keys := got.Column(0).Data().Buffers()[1].Bytes()
	if !inside(keys, b) {
		t.Error("decoded key buffer does not alias the message")
	}
	got.Release()
	// The same message at an odd address is copied, and still decodes.
	shifted := append(make([]byte, 1, len(b)+1), b...)[1:]
	got, err = c.Decode(shifted)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	if inside(got.Column(0).Data().Buffers()[1].Bytes(), shifted) {
		t.Error("misaligned body was not copied")
	}
	sameRecords(t, rec, got)
}

// inside reports whether sub lies within b's memory.
func inside(sub, b []byte) bool {
	if len(sub) == 0 {
		return false
	}
	for i := range b {
		if &b[i] == &sub[0] {
			return true
		}
	}
	return false
}

func TestConcurrentUse(t *testing.T) {
	// One Codec and one Partitioner shared by several goroutines, as the
	// splitter does; run with -race.
	mem := checkedMem(t)
	cfg := GenConfig{Rows: 4000, Seed: 6, KeyCardinality: 100, PayloadBytes: 8}
	c, _ := NewCodec(GenSchema(), mem)
	part, _ := NewPartitioner(GenSchema(), Rule{Kind: Hash, Columns: []string{"key", "name"}}, 10)
	errs := make(chan error, 4)
	for task := range 4 {
		go func() {
			errs <- roundTripTask(mem, c, part, cfg, task)
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// roundTripTask partitions, encodes and decodes one generated task and
// checks that the decoded rows partition the same way.
func roundTripTask(mem *memory.CheckedAllocator, c *Codec, part *Partitioner, cfg GenConfig, task int) error {
	rec := GenTask(mem, cfg, task, 4)
	defer rec.Release()
	want, err := part.Partition(rec, nil)
	if err != nil {
		return err
	}
	b, err := c.AppendRecord(nil, rec)
	if err != nil {
		return err
	}
	got, err := c.Decode(b)
	if err != nil {
		return err
	}
	defer got.Release()
	pids, err := part.Partition(got, nil)
	if err != nil {
		return err
	}
	if !slices.Equal(pids, want) {
		return fmt.Errorf("task %d: partitions differ after a round trip", task)
	}
	return nil
}

// TestEncodeSliceAllocatesForItsRows pins the spill path's cost: encoding a
// 4-row slice of a large record must not allocate the record's size.
func TestEncodeSliceAllocatesForItsRows(t *testing.T) {
	rec := GenTask(memory.DefaultAllocator, GenConfig{Rows: 100_000, PayloadBytes: 100}, 0, 1)
	defer rec.Release()
	c, err := NewCodec(rec.Schema(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := rec.NewSlice(500, 504)
	defer s.Release()
	allocs := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			_, _ = c.AppendRecord(nil, s)
		}
	}).AllocedBytesPerOp()
	if allocs > 64<<10 {
		t.Fatalf("encoding 4 rows of a %d-row record allocated %d bytes", rec.NumRows(), allocs)
	}
}

// TestRecordParts: joined, RecordParts' parts are AppendRecord's bytes,
// for every compression and slices, and the body's large parts are the
// record's own buffers, not copies.
func TestRecordParts(t *testing.T) {
	mem := checkedMem(t)
	schema := allSchema()
	rng := rand.New(rand.NewPCG(12, 13))
	full := randomRecord(mem, schema, 3000, rng, 0.1)
	defer full.Release()
	sliced := full.NewSlice(5, 2001)
	defer sliced.Release()
	empty := full.NewSlice(0, 0)
	defer empty.Release()
	for _, comp := range []Compression{NoCompression, LZ4} {
		c, err := NewCodecWithConfig(schema, mem, CodecConfig{Compression: comp})
		if err != nil {
			t.Fatal(err)
		}
		for i, rec := range []arrow.Record{full, sliced, empty} {
			want, err := c.AppendRecord(nil, rec)
			if err != nil {
				t.Fatal(err)
			}
			parts, err := c.RecordParts(rec)
			if err != nil {
				t.Fatal(err)
			}
			var got []byte
			for _, p := range parts {
				got = append(got, p...)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s record %d: joined parts (%d bytes) differ from AppendRecord's (%d)", comp, i, len(got), len(want))
			}
		}
	}
	parts, _ := NewCodec(schema, mem)
	ps, err := parts.RecordParts(full)
	if err != nil {
		t.Fatal(err)
	}
	if !sharesBuffer(ps, full) {
		t.Fatal("no part of an uncompressed record is one of its buffers")
	}
	if _, err := parts.RecordParts(nil); !errors.Is(err, ErrBadInput) {
		t.Fatalf("nil record: %v, want ErrBadInput", err)
	}
}

// sharesBuffer reports whether some part starts where one of rec's first
// column's buffers does.
func sharesBuffer(parts [][]byte, rec arrow.Record) bool {
	for _, b := range rec.Column(0).Data().Buffers() {
		if b == nil || b.Len() == 0 {
			continue
		}
		for _, p := range parts {
			if len(p) > 0 && &p[0] == &b.Bytes()[0] {
				return true
			}
		}
	}
	return false
}
