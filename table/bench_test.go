package table

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// benchRecord is a 1M-row generated record (key, id, value, 16-byte name).
func benchRecord(b *testing.B) arrow.Record {
	b.Helper()
	return GenTask(memory.DefaultAllocator, GenConfig{Rows: 1 << 20, Seed: 1, PayloadBytes: 16}, 0, 1)
}

// reportRows adds a rows/s metric.
func reportRows(b *testing.B, rows int64) {
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

func BenchmarkPartitionHashInt64(b *testing.B) { benchPartitionHash(b, "key", 8) }

func BenchmarkPartitionHashString(b *testing.B) { benchPartitionHash(b, "name", 20) }

// benchPartitionHash hashes column col of the bench record into 1000
// partitions; bytesPerRow is what SetBytes counts per row hashed.
func benchPartitionHash(b *testing.B, col string, bytesPerRow int64) {
	rec := benchRecord(b)
	defer rec.Release()
	part, _ := NewPartitioner(rec.Schema(), Rule{Kind: Hash, Columns: []string{col}}, 1000)
	out := make([]uint32, rec.NumRows())
	b.SetBytes(rec.NumRows() * bytesPerRow)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := part.Partition(rec, out); err != nil {
			b.Fatal(err)
		}
	}
	reportRows(b, rec.NumRows())
}

func BenchmarkSplit1000Partitions4Groups(b *testing.B) {
	rec := benchRecord(b)
	defer rec.Release()
	benchSplit(b, rec, 1000)
}

// BenchmarkSplitSparse splits records of 1,600 rows over 10,000
// partitions on 4 groups (a task of the 10,000 x 10,000 demo): the sparse
// plan, which orders rows by (group, partition).
func BenchmarkSplitSparse(b *testing.B) {
	rec := GenTask(memory.DefaultAllocator, GenConfig{Rows: 1600, Seed: 1, PayloadBytes: 12}, 0, 1)
	defer rec.Release()
	benchSplit(b, rec, 10_000)
}

// benchSplit splits rec, hashed on its key into parts partitions, on 4
// groups (partition p to group p % 4).
func benchSplit(b *testing.B, rec arrow.Record, parts int) {
	part, _ := NewPartitioner(rec.Schema(), Rule{Kind: Hash, Columns: []string{"key"}}, parts)
	pids, _ := part.Partition(rec, nil)
	groupOf := make([]int, parts)
	for p := range groupOf {
		groupOf[p] = p % 4
	}
	b.SetBytes(RecordBytes(rec))
	b.ReportAllocs()
	for b.Loop() {
		groups, err := Split(memory.DefaultAllocator, rec, pids, groupOf, 4)
		if err != nil {
			b.Fatal(err)
		}
		ReleaseGroups(groups)
	}
	reportRows(b, rec.NumRows())
}

func BenchmarkCodecEncode(b *testing.B) {
	for _, comp := range []Compression{NoCompression, LZ4} {
		b.Run("comp="+string(comp), func(b *testing.B) {
			rec := benchRecord(b)
			defer rec.Release()
			c, _ := NewCodecWithConfig(rec.Schema(), nil, CodecConfig{Compression: comp})
			buf, _ := c.AppendRecord(nil, rec)
			b.SetBytes(RecordBytes(rec))
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if buf, err = c.AppendRecord(buf[:0], rec); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(buf))/float64(RecordBytes(rec)), "ratio")
		})
	}
}

func BenchmarkCodecDecode(b *testing.B) {
	for _, comp := range []Compression{NoCompression, LZ4} {
		b.Run("comp="+string(comp), func(b *testing.B) {
			rec := benchRecord(b)
			defer rec.Release()
			c, _ := NewCodecWithConfig(rec.Schema(), nil, CodecConfig{Compression: comp})
			buf, _ := c.AppendRecord(nil, rec)
			b.SetBytes(RecordBytes(rec))
			b.ReportAllocs()
			for b.Loop() {
				r, err := c.Decode(buf)
				if err != nil {
					b.Fatal(err)
				}
				r.Release()
			}
		})
	}
}

// BenchmarkCodecSmallShards measures the per-message cost for the demo's
// shard size (~500 rows of 1000 input tasks x 1000 partitions is far less:
// 50 rows).
func BenchmarkCodecSmallShards(b *testing.B) {
	rec := GenTask(memory.DefaultAllocator, GenConfig{Rows: 50, Seed: 1, PayloadBytes: 16}, 0, 1)
	defer rec.Release()
	c, _ := NewCodec(rec.Schema(), nil)
	buf, _ := c.AppendRecord(nil, rec)
	b.SetBytes(RecordBytes(rec))
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = c.AppendRecord(buf[:0], rec); err != nil {
			b.Fatal(err)
		}
		r, err := c.Decode(buf)
		if err != nil {
			b.Fatal(err)
		}
		r.Release()
	}
	b.ReportMetric(float64(len(buf)), "msgbytes")
}

// BenchmarkCodecSmallEncode and BenchmarkCodecSmallDecode split the
// per-message cost of a 50-row shard.
func BenchmarkCodecSmallEncode(b *testing.B) {
	rec := GenTask(memory.DefaultAllocator, GenConfig{Rows: 50, Seed: 1, PayloadBytes: 16}, 0, 1)
	defer rec.Release()
	c, _ := NewCodec(rec.Schema(), nil)
	buf, _ := c.AppendRecord(nil, rec)
	b.SetBytes(RecordBytes(rec))
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = c.AppendRecord(buf[:0], rec)
	}
}

func BenchmarkCodecSmallDecode(b *testing.B) {
	rec := GenTask(memory.DefaultAllocator, GenConfig{Rows: 50, Seed: 1, PayloadBytes: 16}, 0, 1)
	defer rec.Release()
	c, _ := NewCodec(rec.Schema(), nil)
	buf, _ := c.AppendRecord(nil, rec)
	b.SetBytes(RecordBytes(rec))
	b.ReportAllocs()
	for b.Loop() {
		r, err := c.Decode(buf)
		if err != nil {
			b.Fatal(err)
		}
		r.Release()
	}
}
