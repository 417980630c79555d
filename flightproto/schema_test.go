package flightproto

import (
	"encoding/binary"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestSerializeSchema: 0xFFFFFFFF, the length n, n bytes, nothing after;
// Arrow's reader reads it back.
func TestSerializeSchema(t *testing.T) {
	for _, s := range []*arrow.Schema{
		ArraySchema("<f8"),
		arrow.NewSchema([]arrow.Field{{Name: "k", Type: arrow.PrimitiveTypes.Int64}, {Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}}, nil),
	} {
		b := SerializeSchema(s, memory.DefaultAllocator)
		if len(b) < 8 || binary.LittleEndian.Uint32(b) != 0xFFFFFFFF {
			t.Fatalf("%d bytes %x...: want the continuation marker first", len(b), b[:min(8, len(b))])
		}
		if n := binary.LittleEndian.Uint32(b[4:]); int(n) != len(b)-8 || n%8 != 0 {
			t.Errorf("length %d, %d bytes after it: want exactly the padded message", n, len(b)-8)
		}
		got, err := flight.DeserializeSchema(b, memory.DefaultAllocator)
		if err != nil || !got.Equal(s) {
			t.Errorf("read back: %v, %v", got, err)
		}
	}
}
