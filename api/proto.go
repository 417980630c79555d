package api

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/rechunk"
)

// The protocol's names as api exported them before they moved to
// flightproto; they stay so that callers of api compile. New code uses
// flightproto, which does not link the engine.

// Flight action types and node-side operations (see flightproto).
const (
	ActionCreate    = flightproto.ActionCreate
	ActionBarrier   = flightproto.ActionBarrier
	ActionStatus    = flightproto.ActionStatus
	ActionClose     = flightproto.ActionClose
	ActionMembers   = flightproto.ActionMembers
	ActionLayout    = flightproto.ActionLayout
	OpJoin          = flightproto.OpJoin
	OpSort          = flightproto.OpSort
	OpCopy          = flightproto.OpCopy
	MaxMessageBytes = flightproto.MaxMessageBytes
)

// Request and reply types (see flightproto).
type (
	Member       = flightproto.Member
	ShuffleRef   = flightproto.ShuffleRef
	BarrierReply = flightproto.BarrierReply
	PutCmd       = flightproto.PutCmd
	PutReply     = flightproto.PutReply
	Ticket       = flightproto.Ticket
	Status       = flightproto.Status
	OpTicket     = flightproto.OpTicket
	JoinSpec     = flightproto.JoinSpec
	OpStats      = flightproto.OpStats
	WriteSpec    = flightproto.WriteSpec
)

// Dial is flightproto.Dial.
func Dial(addr string) (flight.Client, error) { return flightproto.Dial(addr) }

// ArraySchema is flightproto.ArraySchema.
func ArraySchema(dtype string) *arrow.Schema { return flightproto.ArraySchema(dtype) }

// ChunkRecord is flightproto.ChunkRecord.
func ChunkRecord(c rechunk.Chunk) arrow.Record { return flightproto.ChunkRecord(c) }
