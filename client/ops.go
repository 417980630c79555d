package client

// Node-side operations: a join or a sort of output partitions runs on a
// node (flightproto.OpTicket), which streams the result back.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/dfops"
	"github.com/shufflenode/shufflenode/flightproto"
)

// Op runs op on the node at addr ("" for the node c was dialled to) and
// streams the result's records to fn, which must not keep a record, or any
// slice of its buffers, past its call without Retain (their memory is
// reused, as Read's is); records without rows are not passed on. It returns
// the stats the node reported. Errors carry the node's gRPC status code.
func (c *Client) Op(ctx context.Context, addr string, op flightproto.OpTicket, fn func(arrow.Record) error) (flightproto.OpStats, error) {
	var st flightproto.OpStats
	fc, err := c.peer(addr)
	if err != nil {
		return st, err
	}
	t, err := json.Marshal(op)
	if err != nil {
		return st, err
	}
	stream, err := fc.DoGet(ctx, &flight.Ticket{Ticket: t})
	if err != nil {
		return st, err
	}
	rdr, err := flightproto.NewPooledReader(stream, memory.DefaultAllocator)
	if err != nil {
		return st, err
	}
	defer rdr.Release()
	return readOp(rdr, op, fn)
}

// readOp reads an op's stream: stats from the first batch, then records.
func readOp(rdr *flightproto.Reader, op flightproto.OpTicket, fn func(arrow.Record) error) (flightproto.OpStats, error) {
	var st flightproto.OpStats
	first := true
	for rdr.Next() {
		if first {
			if err := json.Unmarshal(rdr.LatestAppMetadata(), &st); err != nil {
				return st, fmt.Errorf("client: %s of partition %d: stats of the first batch: %w", op.Op, op.Partition, err)
			}
			first = false
		}
		if rdr.Record().NumRows() == 0 {
			continue
		}
		if err := fn(rdr.Record()); err != nil {
			return st, err
		}
	}
	if err := rdr.Err(); err != nil {
		return st, err
	}
	if first {
		return st, fmt.Errorf("client: %s of partition %d: the stream ended without a batch", op.Op, op.Partition)
	}
	return st, nil
}

// Join joins partition p of the shuffles left and right on the node at addr
// (see Op and flightproto.OpJoin); send it to the owner of left's partition p.
func (c *Client) Join(ctx context.Context, addr, left, right string, p int, j dfops.JoinSpec, fn func(arrow.Record) error) (flightproto.OpStats, error) {
	js := flightproto.JoinSpecOf(j)
	return c.Op(ctx, addr, flightproto.OpTicket{Op: flightproto.OpJoin, Shuffles: []string{left, right}, Partition: p, Join: &js}, fn)
}

// Sort sorts partition p of shuffle by column on the node at addr (see Op
// and flightproto.OpSort); send it to the partition's owner.
func (c *Client) Sort(ctx context.Context, addr, shuffle string, p int, column string, fn func(arrow.Record) error) (flightproto.OpStats, error) {
	return c.Op(ctx, addr, flightproto.OpTicket{Op: flightproto.OpSort, Shuffles: []string{shuffle}, Partition: p, Column: column}, fn)
}

// Join joins partition p of r (the left side) with partition p of right on
// the node that owns r's partition p: with right co-partitioned with r
// (spec co_partition), that node holds both and nothing crosses the network
// but the result. A lost owner is recovered as Read does (both shuffles),
// and every output row reaches fn once (the join's output order is fixed by
// its inputs' order).
func (r *Result) Join(ctx context.Context, right *Result, p int, j dfops.JoinSpec, fn func(arrow.Record) error) (flightproto.OpStats, error) {
	res := &resumer{fn: fn}
	var st flightproto.OpStats
	err := r.onOwner(ctx, p, func(c *Client, ep Endpoint) (err error) {
		st, err = c.Join(ctx, ep.Addr, r.Shuffle, right.Shuffle, p, j, res.try())
		return right.healOn(ctx, err)
	})
	return st, err
}

// Sort sorts partition p of r by column on its owner and streams the sorted
// rows to fn, recovering a lost owner as Read does.
func (r *Result) Sort(ctx context.Context, p int, column string, fn func(arrow.Record) error) (flightproto.OpStats, error) {
	res := &resumer{fn: fn}
	var st flightproto.OpStats
	err := r.onOwner(ctx, p, func(c *Client, ep Endpoint) (err error) {
		st, err = c.Sort(ctx, ep.Addr, r.Shuffle, p, column, res.try())
		return err
	})
	return st, err
}

// healOn recovers r after a failed op that a lost node may explain (the
// op read r's partition from its owner, which may be the lost one), and
// returns err for the caller's own recovery and retry.
func (r *Result) healOn(ctx context.Context, err error) error {
	var ce *callerError
	if err == nil || errors.As(err, &ce) || !recoverable(err) {
		return err
	}
	if _, herr := r.recover(ctx); herr != nil {
		return &callerError{fmt.Errorf("%w (%w)", herr, err)}
	}
	return err
}

// JoinFile is Join with the result written by the node to the Parquet file
// w (flightproto.WriteSpec) instead of streamed here: only the stats cross
// the network, and OpStats.OutputRows and FileBytes count what the file
// holds. The node must have an output root over w.Path (codes.
// PermissionDenied otherwise). A lost owner is recovered as Join does; the
// file is written whole or not at all, so a retry on another owner writes
// it again.
func (r *Result) JoinFile(ctx context.Context, right *Result, p int, j dfops.JoinSpec, w flightproto.WriteSpec) (flightproto.OpStats, error) {
	js := flightproto.JoinSpecOf(j)
	return r.opFile(ctx, flightproto.OpTicket{Op: flightproto.OpJoin, Shuffles: []string{r.Shuffle, right.Shuffle}, Partition: p, Join: &js, Write: &w},
		func(err error) error { return right.healOn(ctx, err) })
}

// SortFile is Sort with the result written by the node to the Parquet file
// w, as JoinFile.
func (r *Result) SortFile(ctx context.Context, p int, column string, w flightproto.WriteSpec) (flightproto.OpStats, error) {
	return r.opFile(ctx, flightproto.OpTicket{Op: flightproto.OpSort, Shuffles: []string{r.Shuffle}, Partition: p, Column: column, Write: &w}, nil)
}

// CopyFile has the owner of partition p of r write it, as it is, to the
// Parquet file w (flightproto.OpCopy), recovering a lost owner as Read
// does: a shuffle whose output is files, written where the partitions are.
func (r *Result) CopyFile(ctx context.Context, p int, w flightproto.WriteSpec) (flightproto.OpStats, error) {
	return r.opFile(ctx, flightproto.OpTicket{Op: flightproto.OpCopy, Shuffles: []string{r.Shuffle}, Partition: p, Write: &w}, nil)
}

// opFile runs op, an op of r's partition op.Partition that writes a file,
// on the partition's owner, recovering a lost owner as Read does; heal,
// if not nil, first sees each attempt's error (a join heals its right
// side).
func (r *Result) opFile(ctx context.Context, op flightproto.OpTicket, heal func(error) error) (flightproto.OpStats, error) {
	var st flightproto.OpStats
	err := r.onOwner(ctx, op.Partition, func(c *Client, ep Endpoint) (err error) {
		st, err = c.Op(ctx, ep.Addr, op, noRows(op))
		if heal != nil {
			err = heal(err)
		}
		return err
	})
	return st, err
}

// noRows is the record callback of an op that writes a file: its stream
// carries no rows, so one is a protocol error.
func noRows(op flightproto.OpTicket) func(arrow.Record) error {
	return func(rec arrow.Record) error {
		return &callerError{fmt.Errorf("client: %s of partition %d to %s: the node streamed %d rows instead of writing them",
			op.Op, op.Partition, op.Write.Path, rec.NumRows())}
	}
}
