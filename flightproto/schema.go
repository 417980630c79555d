package flightproto

import (
	"bytes"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// eosMarker is the IPC stream's end-of-stream marker.
const eosMarker = "\xff\xff\xff\xff\x00\x00\x00\x00"

// SerializeSchema is schema as FlightInfo.schema and SchemaResult.schema
// carry it (docs/flight-api.md, "serialized schema"): one encapsulated IPC
// message (the continuation marker, its length, the Schema flatbuffer
// padded to 8 bytes) and nothing after it. flight.SerializeSchema writes a
// whole IPC stream, which ends with an end-of-stream marker; readers of
// either form read the first message only.
func SerializeSchema(schema *arrow.Schema, mem memory.Allocator) []byte {
	return bytes.TrimSuffix(flight.SerializeSchema(schema, mem), []byte(eosMarker))
}
