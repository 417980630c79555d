package api

// Node-side operations: a DoGet with an OpTicket runs a join or a sort of
// output partitions on the node that receives it and streams the result.
//
// The node reads each input partition whole (from its spill store when it
// owns it, else over Flight from the owner, dialled per read as proxy does),
// runs the dfops function and streams the result in batches of at most
// dfops.DefaultBatchRows rows. The first batch carries OpStats as app
// metadata. What one op holds in memory: its input partitions (one copy,
// concatenated), the join's matched row numbers (8 bytes per output row) or
// the sorted copy, and one output batch in flight. Before it reads, a join
// or a sort reserves that from the node's op budget (service.ReserveOp,
// serve --op-memory: twice the bytes of a partition read whole, once those
// of a join's lead side held for the stream, nothing for one streamed into
// a file) and waits its turn while the running ops hold it.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/dfops"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/table"
	"google.golang.org/grpc/status"
)

// MaxOpTicketBytes bounds an op ticket; a longer one is refused unread.
const MaxOpTicketBytes = 64 << 10

// isOpTicket reports whether a DoGet ticket is an OpTicket: a JSON object
// with an "op" field.
func isOpTicket(b []byte) bool {
	var probe struct {
		Op *string `json:"op"`
	}
	return json.Unmarshal(b, &probe) == nil && probe.Op != nil
}

// DecodeOpTicket decodes and checks an op ticket: a known op, the number of
// shuffles it takes with valid IDs, a partition >= 0 and the op's own
// argument (a valid join, or a column). Unknown fields are refused. Errors
// wrap service.ErrBadInput.
func DecodeOpTicket(b []byte) (flightproto.OpTicket, error) {
	var op flightproto.OpTicket
	if len(b) > MaxOpTicketBytes {
		return op, fmt.Errorf("%w: op ticket of %d bytes over the limit of %d", service.ErrBadInput, len(b), MaxOpTicketBytes)
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&op); err != nil {
		return op, fmt.Errorf("%w: op ticket: %w", service.ErrBadInput, err)
	}
	if d.More() {
		return op, fmt.Errorf("%w: op ticket: data after the JSON object", service.ErrBadInput)
	}
	if err := op.Validate(); err != nil {
		return op, fmt.Errorf("%w: %w", service.ErrBadInput, err)
	}
	if op.Write != nil {
		if err := writeConfig(op.Write).Validate(); err != nil {
			return op, fmt.Errorf("%w: op ticket: write: %w", service.ErrBadInput, err)
		}
	}
	if op.Join != nil && len(op.Join.Suffixes) == 0 {
		op.Join.Suffixes = nil // [] means the defaults, as absent does
	}
	return op, nil
}

// doOp runs an op ticket and streams its result.
func (s *Server) doOp(b []byte, stream flight.FlightService_DoGetServer) error {
	op, err := DecodeOpTicket(b)
	if err != nil {
		return toStatus(err)
	}
	out := opOut{stream: stream}
	if op.Write != nil {
		out.path, err = s.writePath(op.Write)
	}
	switch {
	case err != nil:
	case op.Op == flightproto.OpJoin:
		err = s.runJoin(stream.Context(), op, out)
	case op.Op == flightproto.OpCopy:
		err = s.runCopy(stream.Context(), op, out)
	default:
		err = s.runSort(stream.Context(), op, out)
	}
	if err != nil {
		return opStatus(fmt.Errorf("%s of shuffle %s partition %d on node %s: %w",
			op.Op, strings.Join(op.Shuffles, " and "), op.Partition, s.svc.Name(), err))
	}
	return nil
}

// opStatus keeps the code of a status from another node (an owner read
// from), else maps err as toStatus does.
func opStatus(err error) error {
	if st, ok := status.FromError(err); ok {
		return status.Error(st.Code(), err.Error())
	}
	return toStatus(err)
}

// opOut is where an op's result goes: the stream, or the file at path
// (op.Write, checked) and then its stats on the stream.
type opOut struct {
	stream flight.FlightService_DoGetServer
	path   string
}

// runJoin joins partition p of the two shuffles. The build side (the right
// for inner, left and outer joins, the left for right joins) is read whole;
// the lead side is joined batch by batch as it is read
// (dfops.StreamJoin), so it is never in memory at once when the result goes
// to a file. A result streamed back needs the input rows in its first
// batch: the lead side's batches are then held (not concatenated) until
// they are counted.
func (s *Server) runJoin(ctx context.Context, op flightproto.OpTicket, out opOut) error {
	j, _ := op.Join.DFOps() // checked by DecodeOpTicket
	left, right, schema, err := s.joinSchema(op.Shuffles, j)
	if err != nil {
		return err
	}
	lead := dfops.LeadSide(j.How)
	leadCopies := 0 // streamed through into a file
	if op.Write == nil {
		leadCopies = 1 // held as read: the first batch carries the input rows
	}
	mem, err := s.svc.ReserveOp(ctx, op.Partition, 1, service.OpInput{Shuffle: op.Shuffles[1-lead], Copies: 2},
		service.OpInput{Shuffle: op.Shuffles[lead], Copies: leadCopies})
	if err != nil {
		return err
	}
	defer mem.Release()
	build, remote, err := s.readWhole(ctx, op.Shuffles[1-lead], op.Partition)
	if err != nil {
		return err
	}
	defer build.Release()
	st := flightproto.OpStats{Node: s.svc.Name(), InputRows: make([]int64, 2)}
	st.InputRows[1-lead] = build.NumRows()
	if remote {
		st.Remote++
		mem.Charge(2 * table.RecordBytes(build))
	}
	src := s.stream(op.Shuffles[lead], op.Partition, &st)
	if op.Write == nil {
		remoteBefore := st.Remote
		held, err := holdAll(ctx, src)
		if err != nil {
			return err
		}
		defer releaseRecords(held)
		var bytes int64
		for _, rec := range held {
			st.InputRows[lead] += rec.NumRows()
			bytes += table.RecordBytes(rec)
		}
		if st.Remote > remoteBefore { // held records from another node count now
			mem.Charge(bytes)
		}
		src = replay(held)
	}
	var sink opSink
	var sj *dfops.StreamJoin
	defer func() {
		if sj != nil {
			sj.Release()
		}
	}()
	write := func(rec arrow.Record) error {
		if sink == nil { // a stream's stats go first: its input rows are all counted by now
			k, err := s.newSink(out.stream, op, out.path, schema, st)
			if err != nil {
				return err
			}
			sink = k
		}
		return sink.write(rec)
	}
	if sj, err = dfops.NewStreamJoin(s.mem, left, right, build, j, 0, write); err != nil {
		return badData(err)
	}
	err = src(ctx, func(rec arrow.Record) error { return sj.Add(rec) })
	if err == nil {
		err = sj.Finish()
	}
	st.InputRows[lead] = sj.LeadRows()
	return s.endJoin(out, op, schema, st, sink, err)
}

// endJoin ends a join's result: on err, drops it; else commits it (a
// result without rows gets its sink now), with the final stats st for a
// file.
func (s *Server) endJoin(out opOut, op flightproto.OpTicket, schema *arrow.Schema, st flightproto.OpStats, sink opSink, err error) error {
	if err != nil {
		if sink != nil {
			sink.abort()
		}
		return badData(err)
	}
	if sink == nil {
		if sink, err = s.newSink(out.stream, op, out.path, schema, st); err != nil {
			return err
		}
	}
	if f, ok := sink.(*fileSink); ok {
		f.st.InputRows, f.st.Remote = st.InputRows, st.Remote
	}
	return sink.close()
}

// source hands records to fn one at a time (fn does not keep them past
// its call without Retain), in order.
type source func(ctx context.Context, fn func(arrow.Record) error) error

// stream is the source of partition p of shuffle id: this node's store
// when it owns p, else the owner (counted in st.Remote).
func (s *Server) stream(id string, p int, st *flightproto.OpStats) source {
	return func(ctx context.Context, fn func(arrow.Record) error) error {
		seen := false
		err := s.svc.Get(ctx, id, p, func(rec arrow.Record) error {
			defer rec.Release() // Get hands over its reference
			seen = true
			return fn(rec)
		})
		if errors.Is(err, service.ErrNotOwner) && !seen {
			st.Remote++
			err = s.fetch(ctx, id, p, fn)
		}
		return err
	}
}

// holdAll returns every record of src, retained.
func holdAll(ctx context.Context, src source) ([]arrow.Record, error) {
	var recs []arrow.Record
	err := src(ctx, func(rec arrow.Record) error {
		rec.Retain()
		recs = append(recs, rec)
		return nil
	})
	if err != nil {
		releaseRecords(recs)
		return nil, err
	}
	return recs, nil
}

// replay is the source of recs.
func replay(recs []arrow.Record) source {
	return func(_ context.Context, fn func(arrow.Record) error) error {
		for _, rec := range recs {
			if err := fn(rec); err != nil {
				return err
			}
		}
		return nil
	}
}

// joinSchema checks the join against both shuffles' schemas and returns
// them and the join's output schema.
func (s *Server) joinSchema(ids []string, j dfops.JoinSpec) (left, right, out *arrow.Schema, err error) {
	if left, err = s.svc.Schema(ids[0]); err != nil {
		return nil, nil, nil, err
	}
	if right, err = s.svc.Schema(ids[1]); err != nil {
		return nil, nil, nil, err
	}
	if out, err = dfops.JoinSchema(left, right, j); err != nil {
		return nil, nil, nil, fmt.Errorf("%w: %w", service.ErrBadInput, err)
	}
	return left, right, out, nil
}

// runSort sorts partition p of the shuffle by the column.
func (s *Server) runSort(ctx context.Context, op flightproto.OpTicket, out opOut) error {
	schema, err := s.svc.Schema(op.Shuffles[0])
	if err != nil {
		return err
	}
	if n := len(schema.FieldIndices(op.Column)); n != 1 {
		return fmt.Errorf("%w: sort column %q: the shuffle has %d columns of that name", service.ErrBadInput, op.Column, n)
	}
	mem, err := s.svc.ReserveOp(ctx, op.Partition, dfops.MaxPasses, service.OpInput{Shuffle: op.Shuffles[0], Copies: 2})
	if err != nil {
		return err
	}
	defer mem.Release()
	if k := mem.Passes(); k > 1 {
		return s.sortInPasses(ctx, op, out, schema, k)
	}
	ins, err := s.readInputs(ctx, op)
	if err != nil {
		return err
	}
	if ins.stats.Remote > 0 {
		mem.Charge(2 * table.RecordBytes(ins.recs[0]))
	}
	sorted, err := dfops.SortStable(s.mem, ins.recs[0], op.Column)
	ins.release()
	if err != nil {
		return badData(err)
	}
	defer sorted.Release()
	w, err := s.newSink(out.stream, op, out.path, schema, ins.stats)
	if err != nil {
		return err
	}
	if err := writeBatches(w, sorted); err != nil {
		w.abort()
		return err
	}
	return w.close()
}

// sortInPasses sorts partition p in k passes, for a partition whose sort
// would not fit the node's op budget: it reads the partition's key column
// and ranks the rows into k buckets (dfops.RankBuckets), then reads the
// partition again once per bucket, keeping, sorting and writing that
// bucket's rows. It holds the key column and one bucket's rows at a time.
// Every read of a sealed shuffle's partition gives the same rows in the
// same order; a read that does not is an error.
func (s *Server) sortInPasses(ctx context.Context, op flightproto.OpTicket, out opOut, schema *arrow.Schema, k int) error {
	id, p := op.Shuffles[0], op.Partition
	ci := schema.FieldIndices(op.Column)[0]
	st := flightproto.OpStats{Node: s.svc.Name(), InputRows: []int64{0}}
	var keys []arrow.Array
	err := s.stream(id, p, &st)(ctx, func(rec arrow.Record) error {
		c := rec.Column(ci)
		c.Retain()
		keys = append(keys, c)
		st.InputRows[0] += rec.NumRows()
		return nil
	})
	var buckets []uint8
	if err == nil {
		buckets, err = s.rankBuckets(keys, k)
	}
	for _, a := range keys {
		a.Release()
	}
	if err != nil {
		return badData(err)
	}
	s.log.Info("sorting in passes", "shuffle", id, "partition", p, "passes", k, "rows", len(buckets))
	st.Passes = k
	w, err := s.newSink(out.stream, op, out.path, schema, st)
	if err != nil {
		return err
	}
	for b := range k {
		if err := s.sortBucket(ctx, op, schema, buckets, uint8(b), w); err != nil {
			w.abort()
			return err
		}
	}
	return w.close()
}

// rankBuckets concatenates a partition's key column and ranks its rows
// into k buckets.
func (s *Server) rankBuckets(keys []arrow.Array, k int) ([]uint8, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	all, err := array.Concatenate(keys, s.mem)
	if err != nil {
		return nil, err
	}
	defer all.Release()
	return dfops.RankBuckets(all, k)
}

// sortBucket reads partition op.Partition again and sorts and writes the
// rows of bucket b (rows whose buckets entry is b, numbered in read order).
func (s *Server) sortBucket(ctx context.Context, op flightproto.OpTicket, schema *arrow.Schema, buckets []uint8, b uint8, w opSink) error {
	var parts []arrow.Record
	defer func() { releaseRecords(parts) }()
	var again flightproto.OpStats // the first read counted the partition
	seen := 0
	err := s.stream(op.Shuffles[0], op.Partition, &again)(ctx, func(rec arrow.Record) error {
		n := int(rec.NumRows())
		if seen+n > len(buckets) {
			return fmt.Errorf("pass %d read more than the %d rows of the first", b+1, len(buckets))
		}
		take := bucketRows(buckets[seen:seen+n], b)
		seen += n
		if len(take) == 0 {
			return nil
		}
		part, err := dfops.TakeRows(s.mem, rec, take)
		if err != nil {
			return err
		}
		parts = append(parts, part)
		return nil
	})
	if err == nil && seen != len(buckets) {
		err = fmt.Errorf("pass %d read %d rows, the first %d", b+1, seen, len(buckets))
	}
	if err != nil || len(parts) == 0 {
		return err
	}
	whole, err := s.concat(schema, parts)
	if err != nil {
		return err
	}
	sorted, err := dfops.SortStable(s.mem, whole, op.Column)
	whole.Release()
	if err != nil {
		return badData(err)
	}
	defer sorted.Release()
	return writeBatches(w, sorted)
}

// writeBatches writes rec to w in batches of dfops.DefaultBatchRows rows.
func writeBatches(w opSink, rec arrow.Record) error {
	for off := int64(0); off < rec.NumRows(); off += dfops.DefaultBatchRows {
		if err := w.writeSlice(rec, off, min(off+dfops.DefaultBatchRows, rec.NumRows())); err != nil {
			return err
		}
	}
	return nil
}

// bucketRows returns the rows whose bucket is b.
func bucketRows(buckets []uint8, b uint8) []int32 {
	var rows []int32
	for i, x := range buckets {
		if x == b {
			rows = append(rows, int32(i))
		}
	}
	return rows
}

// runCopy writes partition p of the shuffle, as it is, to op.Write's file,
// record by record (not concatenated, as a join's or a sort's inputs are).
func (s *Server) runCopy(ctx context.Context, op flightproto.OpTicket, out opOut) error {
	id, p := op.Shuffles[0], op.Partition
	schema, err := s.svc.Schema(id)
	if err != nil {
		return err
	}
	w, err := s.newFileSink(out.stream, op, out.path, schema, flightproto.OpStats{Node: s.svc.Name(), InputRows: []int64{0}})
	if err != nil {
		return err
	}
	seen := false
	each := func(rec arrow.Record) error {
		seen = true
		w.st.InputRows[0] += rec.NumRows()
		return w.write(rec)
	}
	err = s.svc.Get(ctx, id, p, func(rec arrow.Record) error {
		defer rec.Release() // Get hands over its reference
		return each(rec)
	})
	if errors.Is(err, service.ErrNotOwner) && !seen {
		w.st.Remote = 1
		err = s.fetch(ctx, id, p, each)
	}
	if err != nil {
		w.abort()
		return err
	}
	return w.close()
}

// badData marks the errors of dfops (key types, columns, sizes) as bad
// input; others (the stream's) stay as they are.
func badData(err error) error {
	for _, e := range []error{dfops.ErrKeyType, dfops.ErrColumn, dfops.ErrSpec, dfops.ErrTooLarge, dfops.ErrUnsupportedType} {
		if errors.Is(err, e) {
			return fmt.Errorf("%w: %w", service.ErrBadInput, err)
		}
	}
	return err
}

// opInputs are an op's input partitions, each whole in one record.
type opInputs struct {
	recs  []arrow.Record
	stats flightproto.OpStats
}

func (in *opInputs) release() {
	for _, r := range in.recs {
		r.Release()
	}
	in.recs = nil
}

// readInputs reads partition op.Partition of every shuffle of op.
func (s *Server) readInputs(ctx context.Context, op flightproto.OpTicket) (*opInputs, error) {
	in := &opInputs{stats: flightproto.OpStats{Node: s.svc.Name()}}
	for _, id := range op.Shuffles {
		rec, remote, err := s.readWhole(ctx, id, op.Partition)
		if err != nil {
			in.release()
			return nil, err
		}
		in.recs = append(in.recs, rec)
		in.stats.InputRows = append(in.stats.InputRows, rec.NumRows())
		if remote {
			in.stats.Remote++
		}
	}
	return in, nil
}

// readWhole reads partition p of shuffle id into one record: from this
// node's store when it owns p, else from the owner (remote is then true).
func (s *Server) readWhole(ctx context.Context, id string, p int) (rec arrow.Record, remote bool, err error) {
	schema, err := s.svc.Schema(id)
	if err != nil {
		return nil, false, err
	}
	var recs []arrow.Record
	defer func() { releaseRecords(recs) }()
	err = s.svc.Get(ctx, id, p, func(r arrow.Record) error {
		recs = append(recs, r) // Get hands over its reference
		return nil
	})
	if errors.Is(err, service.ErrNotOwner) {
		releaseRecords(recs)
		recs, remote = nil, true
		err = s.fetch(ctx, id, p, func(r arrow.Record) error {
			r.Retain()
			recs = append(recs, r)
			return nil
		})
	}
	if err != nil {
		return nil, remote, err
	}
	rec, err = s.concat(schema, recs)
	return rec, remote, err
}

// concat returns recs as one record of schema (an empty one for none).
func (s *Server) concat(schema *arrow.Schema, recs []arrow.Record) (arrow.Record, error) {
	switch len(recs) {
	case 0:
		b := array.NewRecordBuilder(s.mem, schema)
		defer b.Release()
		return b.NewRecord(), nil
	case 1:
		recs[0].Retain()
		return recs[0], nil
	}
	return table.Concat(s.mem, recs)
}

// fetch streams partition p of shuffle id from its owner to fn (which
// must Retain what it keeps), over the cluster's own streams.
func (s *Server) fetch(ctx context.Context, id string, p int, fn func(arrow.Record) error) error {
	return s.svc.Fetch(ctx, id, p, func(rec arrow.Record) error {
		defer rec.Release()
		return fn(rec)
	})
}

func releaseRecords(recs []arrow.Record) {
	for _, r := range recs {
		r.Release()
	}
}

// opWriter streams an op's result; the first batch carries the stats.
type opWriter struct {
	w      *flightproto.Writer
	schema *arrow.Schema
	mem    memory.Allocator
	stats  []byte
	sent   bool
}

func (s *Server) newOpWriter(stream flight.FlightService_DoGetServer, schema *arrow.Schema, st flightproto.OpStats) *opWriter {
	b, _ := json.Marshal(st)
	w := s.newWriter(stream, schema)
	return &opWriter{w: w, schema: schema, mem: s.mem, stats: b}
}

// write sends one batch (the caller keeps its reference).
func (o *opWriter) write(rec arrow.Record) error {
	if o.sent {
		return o.w.Write(rec)
	}
	o.sent = true
	return o.w.WriteWithAppMetadata(rec, o.stats)
}

// writeSlice sends rows [from, to) of rec.
func (o *opWriter) writeSlice(rec arrow.Record, from, to int64) error {
	sl := rec.NewSlice(from, to)
	defer sl.Release()
	return o.write(sl)
}

// abort does nothing: the op's error ends the stream.
func (o *opWriter) abort() {}

// close sends the stats in an empty batch if no batch carried them, and
// ends the stream.
func (o *opWriter) close() error {
	if !o.sent {
		b := array.NewRecordBuilder(o.mem, o.schema)
		defer b.Release()
		rec := b.NewRecord()
		defer rec.Release()
		if err := o.write(rec); err != nil {
			return err
		}
	}
	return o.w.Close()
}
