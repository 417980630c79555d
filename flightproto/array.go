package flightproto

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/rechunk"
)

// ArraySchema is how array chunks travel in DoPut and DoGet: one row per
// chunk, "data" its C-order bytes and "shape" its extents as a JSON list;
// the dtype is the schema's "dtype" metadata.
func ArraySchema(dtype string) *arrow.Schema {
	md := arrow.NewMetadata([]string{"dtype"}, []string{dtype})
	return arrow.NewSchema([]arrow.Field{
		{Name: "data", Type: arrow.BinaryTypes.LargeBinary},
		{Name: "shape", Type: arrow.BinaryTypes.String},
	}, &md)
}

// DimDataKey is the schema metadata key under which a DoGet stream of an
// array's output partition carries the partition's DAP description: the
// JSON object {"__version__", "dim_data"} of the process whose local array
// the partition is.
const DimDataKey = "dim_data"

// PartitionSchema is ArraySchema(dtype) with local, a partition's DAP
// description as JSON, under DimDataKey: the schema of a DoGet stream of
// one output partition of an array shuffle.
func PartitionSchema(dtype string, local []byte) *arrow.Schema {
	md := arrow.NewMetadata([]string{"dtype", DimDataKey}, []string{dtype, string(local)})
	return arrow.NewSchema(ArraySchema(dtype).Fields(), &md)
}

// DimDataOf returns the DAP description a schema carries under DimDataKey;
// ok is false when it carries none (a node before it sent one).
func DimDataOf(s *arrow.Schema) (local []byte, ok bool) {
	if s == nil {
		return nil, false
	}
	v, ok := s.Metadata().GetValue(DimDataKey)
	return []byte(v), ok
}

// ChunkRecord encodes one chunk as a one-row record of ArraySchema. The
// record references c.Data.
func ChunkRecord(c rechunk.Chunk) arrow.Record {
	shape, _ := json.Marshal(c.Shape)
	schema := ArraySchema(c.DType.String())
	data := array.NewData(arrow.BinaryTypes.LargeBinary, 1, []*memory.Buffer{nil,
		memory.NewBufferBytes(arrow.Int64Traits.CastToBytes([]int64{0, int64(len(c.Data))})),
		memory.NewBufferBytes(c.Data)}, nil, 0, 0)
	defer data.Release()
	col := array.NewLargeBinaryData(data)
	defer col.Release()
	sb := array.NewStringBuilder(memory.DefaultAllocator)
	defer sb.Release()
	sb.Append(string(shape))
	shapes := sb.NewArray()
	defer shapes.Release()
	return array.NewRecord(schema, []arrow.Array{col, shapes}, 1)
}

// ChunkFromRecords decodes the one chunk that a stream of ArraySchema
// records carries (next yields records until io.EOF; each valid until the
// next call, as a Reader's). The chunk's data aliases the record's buffer,
// not a copy: the record is Retained, and release releases it. Call
// release once nothing uses the chunk's data (its buffer may then go back
// to a pool, see NewPooledReader); a chunk whose release is never called
// is the garbage collector's. release is never nil and is idempotent.
func ChunkFromRecords(next func() (arrow.Record, error)) (c rechunk.Chunk, release func(), err error) {
	var held arrow.Record
	release = func() {
		if held != nil {
			held.Release()
			held = nil
		}
	}
	rows := 0
	for {
		rec, err := next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			release()
			return c, release, err
		}
		if rows += int(rec.NumRows()); rows > 1 || rec.NumRows() == 0 {
			continue
		}
		if c, err = chunkFromRecord(rec); err != nil {
			return c, release, err
		}
		rec.Retain()
		held = rec
	}
	if rows != 1 {
		release()
		return rechunk.Chunk{}, release, fmt.Errorf("an array chunk travels as exactly one row, got %d", rows)
	}
	return c, release, nil
}

func chunkFromRecord(rec arrow.Record) (rechunk.Chunk, error) {
	schema := rec.Schema()
	data, ok1 := rec.Column(0).(*array.LargeBinary)
	shapes, ok2 := rec.Column(1).(*array.String)
	if rec.NumCols() != 2 || !ok1 || !ok2 {
		return rechunk.Chunk{}, fmt.Errorf("array chunk record must have columns data (large_binary) and shape (string), got %s", schema)
	}
	dts, _ := schema.Metadata().GetValue("dtype")
	dt, err := rechunk.ParseDType(dts)
	if err != nil {
		return rechunk.Chunk{}, fmt.Errorf("array chunk record: dtype metadata: %w", err)
	}
	var shape []int64
	if err := json.Unmarshal([]byte(shapes.Value(0)), &shape); err != nil {
		return rechunk.Chunk{}, fmt.Errorf("array chunk record: shape %q: %w", shapes.Value(0), err)
	}
	v := data.Value(0)
	return rechunk.Chunk{DType: dt, Shape: shape, Data: v[:len(v):len(v)]}, nil
}
