package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/service"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// doGetMany streams the partitions of a multi-partition ticket (Partitions
// or Range of a dataframe shuffle) in one DoGet: each partition's batches
// as a DoGet of it would stream them, then an empty batch whose app
// metadata is its flightproto.PartitionEnd. A partition this node does not
// own is read from its owner, as for a single partition. So a consumer of
// 100,000 small partitions makes one call per owner, not one per partition.
func (s *Server) doGetMany(tk flightproto.Ticket, stream flight.FlightService_DoGetServer) error {
	parts, schema, err := s.manyOf(tk)
	if err != nil {
		return err
	}
	w := s.newWriter(stream, schema)
	end := emptyRecord(s.mem, schema)
	defer end.Release()
	for _, p := range parts {
		if err := s.getOne(stream.Context(), tk.Shuffle, p, w); err != nil {
			return toStatus(err)
		}
		md, _ := json.Marshal(flightproto.PartitionEnd{Partition: p, End: true})
		if err := w.WriteWithAppMetadata(end, md); err != nil {
			return err
		}
	}
	return w.Close()
}

// manyOf checks a multi-partition ticket: its partitions and the shuffle's
// output schema.
func (s *Server) manyOf(tk flightproto.Ticket) ([]int, *arrow.Schema, error) {
	in, err := s.svc.Info(tk.Shuffle)
	if err != nil {
		return nil, nil, toStatus(err)
	}
	if s.isArray(tk.Shuffle) {
		return nil, nil, status.Errorf(codes.InvalidArgument, "shuffle %s is an array rechunk: read its chunks one per ticket", tk.Shuffle)
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

// getOne streams partition p of a dataframe shuffle into w, from this node
// or through it.
func (s *Server) getOne(ctx context.Context, id string, p int, w *flightproto.Writer) error {
	err := s.svc.GetPooled(ctx, id, p, w.WriteReleased)
	if errors.Is(err, service.ErrNotOwner) {
		err = s.proxy(ctx, flightproto.Ticket{Shuffle: id, Partition: p}, w)
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
