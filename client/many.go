package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/flightproto"
)

// ErrIncomplete is a multi-partition read whose stream ended, or went out
// of order, before every partition's end.
var ErrIncomplete = errors.New("client: multi-partition read incomplete")

// ReadPartitions reads partitions parts of dataframe shuffle id from the
// node at addr in one DoGet (a multi-partition ticket): fn gets each
// partition's records in stream order with its number (it must not keep a
// record past its call without Retain), and done is called once each
// partition is complete, in the order of parts. An error from fn or done
// ends the read with that error.
func (c *Client) ReadPartitions(ctx context.Context, addr, id string, parts []int, fn func(p int, rec arrow.Record) error, done func(p int) error) error {
	fc, err := c.peer(addr)
	if err != nil {
		return err
	}
	tk, _ := json.Marshal(flightproto.Ticket{Shuffle: id, Partitions: parts})
	stream, err := fc.DoGet(ctx, &flight.Ticket{Ticket: tk})
	if err != nil {
		return err
	}
	rdr, err := flightproto.NewPooledReader(stream, memory.DefaultAllocator)
	if err != nil {
		return fmt.Errorf("client: shuffle %s: %d partitions from %s: %w", id, len(parts), addr, err)
	}
	defer rdr.Release()
	next := 0 // index in parts of the partition being streamed
	for rdr.Next() {
		end, ok, err := flightproto.DecodePartitionEnd(rdr.LatestAppMetadata())
		switch {
		case err != nil:
			return err
		case next == len(parts) || (ok && end.Partition != parts[next]):
			return fmt.Errorf("%w: shuffle %s from %s: partition end %d, expected %v", ErrIncomplete, id, addr, end.Partition, parts[min(next, len(parts)-1)])
		case ok:
			next++
			err = done(end.Partition)
		default:
			err = fn(parts[next], rdr.Record())
		}
		if err != nil {
			return &callerError{err}
		}
	}
	if err := rdr.Err(); err != nil {
		return err
	}
	if next < len(parts) {
		return fmt.Errorf("%w: shuffle %s from %s: %d of %d partitions", ErrIncomplete, id, addr, next, len(parts))
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
