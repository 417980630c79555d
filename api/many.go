package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/service"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// doGetMany streams the partitions of a multi-partition ticket (Partitions
// or Range) in one DoGet: each partition's batches as a DoGet of it would
// stream them (an array shuffle's new chunk: its one record, without the
// dim_data a DoGet of it has in its schema), then an empty batch whose app
// metadata is its flightproto.PartitionEnd; or, for a ticket that asks to
// Pack them, batches shared by consecutive small partitions, each saying
// where partitions end in it (packer). A partition this node does not own
// is read from its owner, as for a single partition. So a consumer of
// 100,000 small partitions makes one call per owner, not one per partition.
// When a partition's read fails, what was read before the failure is sent
// first (with the ends of the partitions before it), so that a client
// resumes from there.
func (s *Server) doGetMany(tk flightproto.Ticket, stream flight.FlightService_DoGetServer) error {
	parts, schema, err := s.manyOf(tk)
	if err != nil {
		return err
	}
	w := s.newWriter(stream, schema)
	out, err := s.newManyOut(tk.Pack, s.isArray(tk.Shuffle), stream, w, schema)
	if err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	defer out.release()
	for _, p := range parts {
		if err := out.part(stream.Context(), tk.Shuffle, p); err != nil {
			_ = out.flush() // a failure to send is not the error to report
			return toStatus(err)
		}
		if err := out.end(p); err != nil {
			return err
		}
	}
	if err := out.flush(); err != nil {
		return err
	}
	return w.Close()
}

// manyOut is how a multi-partition DoGet sends its partitions: part reads
// partition p of shuffle id into it, end ends that partition, and flush
// sends whatever is held back.
type manyOut interface {
	part(ctx context.Context, id string, p int) error
	end(p int) error
	flush() error
	release()
}

// newManyOut returns a packer when pack is set, else partitionEnds (of an
// array shuffle's chunks when array is set; manyOf refuses to pack them).
func (s *Server) newManyOut(pack, array bool, stream flight.FlightService_DoGetServer, w *flightproto.Writer, schema *arrow.Schema) (manyOut, error) {
	if pack {
		return &packer{s: s, w: w, schema: schema, mem: &s.packs}, nil
	}
	return s.newPartitionEnds(stream, w, schema, array)
}

// partitionEnds sends the end batches of a multi-partition DoGet. Every
// end is the same IPC message of an empty batch but for its app metadata:
// it is encoded once, and each end after the first is sent as those bytes
// (the first goes through the stream's writer, which sends the schema
// before it when no partition had rows yet). Encoding an empty batch per
// partition took a seventh of the nodes' CPU of a read of 100,000
// partitions.
type partitionEnds struct {
	s      *Server
	stream flight.FlightService_DoGetServer
	w      *flightproto.Writer
	rec    arrow.Record // the empty batch
	header []byte       // the empty batch's IPC message
	body   []byte
	sent   bool // the first end went through w
	md     []byte
	array  bool // an array shuffle's: a partition is one chunk record
}

func (s *Server) newPartitionEnds(stream flight.FlightService_DoGetServer, w *flightproto.Writer, schema *arrow.Schema, array bool) (*partitionEnds, error) {
	e := &partitionEnds{s: s, stream: stream, w: w, rec: emptyRecord(s.mem, schema), array: array}
	var c captured
	cw := flightproto.NewWriter(&c, ipc.WithSchema(schema), ipc.WithAllocator(s.mem))
	err := cw.Write(e.rec)
	if err == nil && len(c.msgs) != 2 { // the schema, then the batch
		err = fmt.Errorf("api: an empty batch encoded as %d messages", len(c.msgs))
	}
	if err != nil {
		e.release()
		return nil, err
	}
	e.header, e.body = c.msgs[1].header, c.msgs[1].body
	return e, nil
}

// part sends the batches of partition p of shuffle id as they are read
// (of an array shuffle, its chunk record).
func (e *partitionEnds) part(ctx context.Context, id string, p int) error {
	if e.array {
		return e.s.chunkTo(ctx, flightproto.Ticket{Shuffle: id, Partition: p}, e.w)
	}
	return e.s.getOne(ctx, id, p, e.w.WriteReleased)
}

// flush does nothing: every batch and end was sent.
func (e *partitionEnds) flush() error { return nil }

// end sends the end of partition p.
func (e *partitionEnds) end(p int) error {
	e.md = appendPartitionEnd(e.md[:0], p)
	if !e.sent {
		e.sent = true
		return e.w.WriteWithAppMetadata(e.rec, e.md)
	}
	// gRPC encodes the message before Send returns: e.md is free again.
	return e.stream.Send(&flight.FlightData{DataHeader: e.header, DataBody: e.body, AppMetadata: e.md})
}

func (e *partitionEnds) release() { e.rec.Release() }

// appendPartitionEnd appends the JSON of flightproto.PartitionEnd{p, true}
// to dst, as encoding/json writes it.
func appendPartitionEnd(dst []byte, p int) []byte {
	dst = append(dst, `{"partition":`...)
	dst = strconv.AppendInt(dst, int64(p), 10)
	return append(dst, `,"end":true}`...)
}

// captured keeps copies of the messages a flightproto.Writer sends.
type captured struct {
	msgs []struct{ header, body []byte }
}

// Send implements flight.DataStreamWriter.
func (c *captured) Send(fd *flight.FlightData) error {
	c.msgs = append(c.msgs, struct{ header, body []byte }{bytes.Clone(fd.DataHeader), bytes.Clone(fd.DataBody)})
	return nil
}

// manyOf checks a multi-partition ticket: its partitions and the shuffle's
// output schema.
func (s *Server) manyOf(tk flightproto.Ticket) ([]int, *arrow.Schema, error) {
	in, err := s.svc.Info(tk.Shuffle)
	if err != nil {
		return nil, nil, toStatus(err)
	}
	if tk.Pack && s.isArray(tk.Shuffle) {
		return nil, nil, status.Errorf(codes.InvalidArgument, "shuffle %s is an array rechunk: its chunks are not packed", tk.Shuffle)
	}
	parts, err := tk.PartitionList(in.Spec.Partitions)
	if err != nil {
		return nil, nil, status.Error(codes.InvalidArgument, err.Error())
	}
	schema, err := s.outputSchema(tk.Shuffle)
	if err != nil {
		return nil, nil, toStatus(err)
	}
	return parts, schema, nil
}

// getOne reads partition p of a dataframe shuffle, from this node or
// through it, into emit, which takes each batch over and must release it
// once nothing reads its buffers (flightproto.Writer.WriteReleased).
func (s *Server) getOne(ctx context.Context, id string, p int, emit func(arrow.Record) error) error {
	err := s.svc.GetPooled(ctx, id, p, emit)
	if errors.Is(err, service.ErrNotOwner) {
		err = s.svc.Fetch(ctx, id, p, emit)
	}
	if err != nil {
		return fmt.Errorf("partition %d: %w", p, err)
	}
	return nil
}

// emptyRecord returns a record of schema with no rows.
func emptyRecord(mem memory.Allocator, schema *arrow.Schema) arrow.Record {
	cols := make([]arrow.Array, len(schema.Fields()))
	for i, f := range schema.Fields() {
		cols[i] = array.MakeArrayOfNull(mem, f.Type, 0)
		defer cols[i].Release()
	}
	return array.NewRecord(schema, cols, 0)
}
