package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/rechunk"
)

// ErrIncomplete is a multi-partition read whose stream ended, or went out
// of order, before every partition's end.
var ErrIncomplete = errors.New("client: multi-partition read incomplete")

// ReadPartitions reads partitions parts of dataframe shuffle id from the
// node at addr in one DoGet (a multi-partition ticket that asks the node
// to pack small partitions into shared batches): fn gets each partition's
// records in stream order with its number (it must not keep a record past
// its call without Retain), and done is called once each partition is
// complete, in the order of parts. An error from fn or done ends the read
// with that error. A node that does not pack sends a batch of its own per
// partition and an end batch after each; both read the same.
func (c *Client) ReadPartitions(ctx context.Context, addr, id string, parts []int, fn func(p int, rec arrow.Record) error, done func(p int) error) error {
	s := &manyStream{id: id, addr: addr, parts: parts, fn: fn, done: done}
	return c.getMany(ctx, addr, flightproto.Ticket{Shuffle: id, Partitions: parts, Pack: true}, s, "partitions")
}

// manyBatcher takes the batches of a multi-partition DoGet, in order.
type manyBatcher interface {
	batch(rec arrow.Record, md []byte) error
	ended() int // how many of the partitions asked have ended
}

// getMany reads the multi-partition ticket tk from the node at addr and
// hands every batch of the stream to b; what names the partitions in
// errors.
func (c *Client) getMany(ctx context.Context, addr string, tk flightproto.Ticket, b manyBatcher, what string) error {
	fc, err := c.peer(addr)
	if err != nil {
		return err
	}
	t, _ := json.Marshal(tk)
	stream, err := fc.DoGet(ctx, &flight.Ticket{Ticket: t})
	if err != nil {
		return err
	}
	rdr, err := flightproto.NewPooledReader(stream, memory.DefaultAllocator)
	if err != nil {
		return fmt.Errorf("client: shuffle %s: %d %s from %s: %w", tk.Shuffle, len(tk.Partitions), what, addr, err)
	}
	defer rdr.Release()
	for rdr.Next() {
		if err := b.batch(rdr.Record(), rdr.LatestAppMetadata()); err != nil {
			return err
		}
	}
	if err := rdr.Err(); err != nil {
		return err
	}
	if n := b.ended(); n < len(tk.Partitions) {
		return fmt.Errorf("%w: shuffle %s from %s: %d of %d %s", ErrIncomplete, tk.Shuffle, addr, n, len(tk.Partitions), what)
	}
	return nil
}

// manyStream hands the batches of a multi-partition DoGet to the caller.
type manyStream struct {
	id, addr string
	parts    []int
	fn       func(p int, rec arrow.Record) error
	done     func(p int) error
	next     int // index in parts of the partition being streamed
	ends     []flightproto.End
}

// batch hands rec's rows to their partitions and ends those that end in it
// (its app metadata md says where).
func (s *manyStream) batch(rec arrow.Record, md []byte) error {
	ends, err := flightproto.DecodeEnds(s.ends[:0], md, rec.NumRows())
	if err != nil {
		return err
	}
	s.ends = ends
	var at int64
	for _, e := range ends {
		if s.next == len(s.parts) || e.Partition != s.parts[s.next] {
			return fmt.Errorf("%w: shuffle %s from %s: partition end %d, expected %v", ErrIncomplete, s.id, s.addr, e.Partition, s.parts[min(s.next, len(s.parts)-1)])
		}
		if err := s.rows(rec, at, e.Row); err != nil {
			return err
		}
		at = e.Row
		s.next++
		if err := s.done(e.Partition); err != nil {
			return &callerError{err}
		}
	}
	return s.rows(rec, at, rec.NumRows())
}

func (s *manyStream) ended() int { return s.next }

// rows hands rows [from, to) of rec to the partition being streamed.
func (s *manyStream) rows(rec arrow.Record, from, to int64) error {
	if from == to {
		return nil
	}
	if s.next == len(s.parts) {
		return fmt.Errorf("%w: shuffle %s from %s: rows after the last partition's end", ErrIncomplete, s.id, s.addr)
	}
	if from > 0 || to < rec.NumRows() {
		rec = rec.NewSlice(from, to)
		defer rec.Release()
	}
	if err := s.fn(s.parts[s.next], rec); err != nil {
		return &callerError{err}
	}
	return nil
}

// ByOwner splits parts into groups of at most max partitions (default
// 1024) that have the same owner, each in the order of parts: what one
// ReadMany call reads in one DoGet.
func (r *Result) ByOwner(parts []int, max int) [][]int {
	if max <= 0 {
		max = 1024
	}
	open := map[string]int{} // owner -> index in groups of its open group
	var groups [][]int
	for _, p := range parts {
		addr := r.endpoint(p).Addr
		i, ok := open[addr]
		if !ok || len(groups[i]) == max {
			i = len(groups)
			open[addr] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], p)
	}
	return groups
}

// ReadMany reads partitions parts (best: one group of ByOwner) in one
// DoGet to their owner, with fn and done as for ReadPartitions. If that read
// fails, the partitions it did not finish are read one by one with Read,
// which recovers a lost owner; rows fn already had of the partition being
// streamed are skipped, so every row reaches fn once.
func (r *Result) ReadMany(ctx context.Context, parts []int, fn func(p int, rec arrow.Record) error, done func(p int) error) error {
	if len(parts) == 0 {
		return nil
	}
	finished, delivered := 0, int64(0)
	count := func(p int, rec arrow.Record) error {
		delivered += rec.NumRows()
		return fn(p, rec)
	}
	end := func(p int) error {
		finished, delivered = finished+1, 0
		return done(p)
	}
	ep := r.endpoint(parts[0])
	err := r.clients[parts[0]%len(r.clients)].ReadPartitions(ctx, ep.Addr, r.Shuffle, parts, count, end)
	var ce *callerError
	if err == nil || errors.As(err, &ce) {
		return unwrapCaller(err)
	}
	return r.readRest(ctx, parts[finished:], delivered, fn, done)
}

// readRest reads parts one by one (after a failed multi-partition read),
// skipping the first skip rows of the first.
func (r *Result) readRest(ctx context.Context, parts []int, skip int64, fn func(p int, rec arrow.Record) error, done func(p int) error) error {
	for i, p := range parts {
		res := &resumer{fn: func(rec arrow.Record) error { return fn(p, rec) }}
		if i == 0 {
			res.delivered = skip
		}
		err := r.onOwner(ctx, p, func(c *Client, ep Endpoint) error { return c.Read(ctx, ep, res.try()) })
		if err != nil {
			return err
		}
		if err := done(p); err != nil {
			return err
		}
	}
	return nil
}

// unwrapCaller returns the caller's own error of err, or err.
func unwrapCaller(err error) error {
	var ce *callerError
	if errors.As(err, &ce) {
		return ce.err
	}
	return err
}

// VisitChunks reads new chunks parts of an array shuffle (best: one group
// of ByOwner) in one DoGet to their owner and calls fn with each, in the
// order of parts; fn must not keep a chunk's data past its call. If that
// read fails (an owner lost, or a node before revision 5, which reads
// array chunks one per call), the chunks fn did not get are read one by
// one with VisitChunk, which recovers a lost owner: fn gets every chunk
// once.
func (r *Result) VisitChunks(ctx context.Context, parts []int, fn func(p int, c rechunk.Chunk) error) error {
	if len(parts) == 0 {
		return nil
	}
	visited := 0
	visit := func(p int, c rechunk.Chunk) error {
		visited++
		return fn(p, c)
	}
	ep := r.endpoint(parts[0])
	err := r.clients[parts[0]%len(r.clients)].readChunks(ctx, ep.Addr, r.Shuffle, parts, visit)
	var ce *callerError
	if err == nil || errors.As(err, &ce) {
		return unwrapCaller(err)
	}
	for _, p := range parts[visited:] {
		if err := r.VisitChunk(ctx, p, func(c rechunk.Chunk) error { return fn(p, c) }); err != nil {
			return err
		}
	}
	return nil
}

// readChunks reads new chunks parts of array shuffle id from the node at
// addr in one DoGet (a multi-partition ticket): each chunk's record, then
// the end of its partition. fn gets each chunk once its end arrived; the
// record is held (its pooled buffer stays its own) until then.
func (c *Client) readChunks(ctx context.Context, addr, id string, parts []int, fn func(p int, c rechunk.Chunk) error) error {
	s := &chunkStream{id: id, addr: addr, parts: parts, fn: fn}
	defer s.drop()
	return c.getMany(ctx, addr, flightproto.Ticket{Shuffle: id, Partitions: parts}, s, "chunks")
}

// chunkStream hands the chunks of a multi-partition DoGet of an array
// shuffle to the caller.
type chunkStream struct {
	id, addr string
	parts    []int
	fn       func(p int, c rechunk.Chunk) error
	next     int          // index in parts of the chunk being streamed
	rec      arrow.Record // its record, held until its end
	ends     []flightproto.End
}

// batch takes a chunk's record, or the end of the chunk held.
func (s *chunkStream) batch(rec arrow.Record, md []byte) error {
	ends, err := flightproto.DecodeEnds(s.ends[:0], md, rec.NumRows())
	if err != nil {
		return err
	}
	s.ends = ends
	if len(ends) == 0 {
		if s.rec != nil || rec.NumRows() != 1 || s.next == len(s.parts) {
			return fmt.Errorf("%w: shuffle %s from %s: a record of %d rows where chunk %d was expected", ErrIncomplete, s.id, s.addr, rec.NumRows(), s.next)
		}
		rec.Retain()
		s.rec = rec
		return nil
	}
	if len(ends) != 1 || rec.NumRows() != 0 || s.rec == nil || s.next == len(s.parts) || ends[0].Partition != s.parts[s.next] {
		return fmt.Errorf("%w: shuffle %s from %s: partition ends %v, expected chunk %d's", ErrIncomplete, s.id, s.addr, ends, s.next)
	}
	rec, s.rec = s.rec, nil
	defer rec.Release()
	got := false
	c, release, err := flightproto.ChunkFromRecords(func() (arrow.Record, error) {
		if got {
			return nil, io.EOF
		}
		got = true
		return rec, nil
	})
	defer release()
	if err != nil {
		return fmt.Errorf("client: shuffle %s chunk %d from %s: %w", s.id, s.parts[s.next], s.addr, err)
	}
	p := s.parts[s.next]
	s.next++
	if err := s.fn(p, c); err != nil {
		return &callerError{err}
	}
	return nil
}

func (s *chunkStream) ended() int { return s.next }

// drop releases a record whose end never came.
func (s *chunkStream) drop() {
	if s.rec != nil {
		s.rec.Release()
		s.rec = nil
	}
}
