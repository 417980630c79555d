package reads

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/shufflenode/shufflenode/member"
	"github.com/shufflenode/shufflenode/receiver"
	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/splitaxes"
	"github.com/shufflenode/shufflenode/wire"
)

// Reads between nodes (a node that does not own a partition answering a
// client's read, a node-side join reading an input another node owns) go
// over the cluster's own streams (wire.TypeRead): the same TLS, private
// network key and back-pressure as every other byte between nodes. The
// owner streams the partition as Arrow IPC record batches of the shuffle's
// codec (the schema is known from the spec), or an array chunk as its shape
// and bytes (rechunk.AppendPiece's format).

// readReq is the body of a TypeRead request.
type readReq struct {
	Shuffle   string `json:"shuffle"`
	Partition int    `json:"partition"`
}

// maxReadReq bounds a read request's body.
const maxReadReq = 4 << 10

// Fetch reads output partition p of dataframe shuffle id from its owner,
// over the cluster's streams, wherever it is (this node included). emit gets
// the record batches in order and must release them; its error stops the
// read.
func (r *Reader) Fetch(ctx context.Context, id string, p int, emit func(arrow.Record) error) error {
	sh, owner, err := r.readTarget(id, p)
	if err != nil {
		return err
	}
	if sh.Array != nil {
		return fmt.Errorf("%w: shuffle %s is an array rechunk: fetch chunks", shuffle.ErrBadInput, id)
	}
	return r.fetch(ctx, id, p, owner, func(b []byte) error {
		rec, err := sh.Codec.Decode(b) // b is ours: decoded in place
		if err != nil {
			return fmt.Errorf("%w: shuffle %s partition %d from %s: %w", shuffle.ErrFailed, id, p, owner, err)
		}
		return emit(rec)
	})
}

// FetchChunk reads new chunk p of array shuffle id from its owner, over the
// cluster's streams.
func (r *Reader) FetchChunk(ctx context.Context, id string, p int) (rechunk.Chunk, error) {
	sh, owner, err := r.readTarget(id, p)
	if err != nil {
		return rechunk.Chunk{}, err
	}
	if sh.Array == nil {
		return rechunk.Chunk{}, fmt.Errorf("%w: shuffle %s is not an array rechunk", shuffle.ErrBadInput, id)
	}
	var whole []byte // the chunk comes in frames of at most chunkFrame bytes
	err = r.fetch(ctx, id, p, owner, func(b []byte) error {
		whole = append(whole, b...)
		return nil
	})
	if err != nil {
		return rechunk.Chunk{}, err
	}
	c, err := rechunk.DecodePiece(whole, sh.Array.DType)
	if err != nil {
		return rechunk.Chunk{}, fmt.Errorf("%w: shuffle %s new chunk %d from %s: %w", shuffle.ErrFailed, id, p, owner, err)
	}
	return c, nil
}

// readTarget checks the partition and names its owner.
func (r *Reader) readTarget(id string, p int) (*receiver.Shuffle, string, error) {
	sh, err := r.cfg.Host.Lookup(id)
	if err != nil {
		return nil, "", err
	}
	if p < 0 || p >= sh.Spec.Partitions {
		return nil, "", fmt.Errorf("%w: shuffle %s: partition %d out of range 0..%d", shuffle.ErrBadInput, id, p, sh.Spec.Partitions-1)
	}
	rt := sh.Route()
	return sh, sh.Members[rt.GroupOf[p]], nil
}

// fetch streams one read from owner into recv.
func (r *Reader) fetch(ctx context.Context, id string, p int, owner string, recv func([]byte) error) error {
	body, err := json.Marshal(readReq{Shuffle: id, Partition: p})
	if err != nil {
		return err
	}
	var recvErr error
	err = r.cfg.Host.Stream(ctx, owner, wire.TypeRead, body, func(b []byte) error {
		recvErr = recv(b)
		return recvErr
	})
	if err != nil && !errors.Is(err, recvErr) {
		return r.cfg.PeerError(id, owner, err)
	}
	return err
}

// HandleStream serves a streamed request of a peer (it is the cluster's
// dht.StreamHandler): a read of an output partition this node owns.
func (r *Reader) HandleStream(ctx context.Context, from member.Member, req wire.Frame, send func([]byte) error) (wire.Type, []byte) {
	if err := r.cfg.Host.Ready(ctx); err != nil {
		return wire.TypeBusy, wire.EncodeBusy(10 * time.Millisecond)
	}
	err := r.serveRead(ctx, req, send)
	if err != nil {
		r.cfg.Host.Log().Debug("read refused", "peer", from.Name, "err", err)
		return wire.TypeRefused, wire.EncodeRefusal(wire.Refusal{Code: r.cfg.RefusalCode(err), Reason: err.Error()})
	}
	return wire.TypeAck, nil
}

// serveRead decodes a read request and streams the partition.
func (r *Reader) serveRead(ctx context.Context, req wire.Frame, send func([]byte) error) error {
	if req.Type != wire.TypeRead {
		return shuffle.Refuse(wire.RefuseUnsupported, fmt.Errorf("streamed request of type %s", req.Type))
	}
	var q readReq
	if len(req.Payload) > maxReadReq || json.Unmarshal(req.Payload, &q) != nil {
		return shuffle.Refuse(wire.RefuseBadRequest, fmt.Errorf("read request: malformed (%d bytes)", len(req.Payload)))
	}
	sh, err := r.cfg.Host.Lookup(q.Shuffle)
	if err != nil {
		return err
	}
	if sh.Array != nil {
		return r.sendChunk(ctx, q, send)
	}
	return r.Get(ctx, q.Shuffle, q.Partition, func(rec arrow.Record) error {
		defer rec.Release()
		b, err := sh.Codec.AppendRecord(nil, rec)
		if err != nil {
			return err
		}
		return send(b)
	})
}

// chunkFrame is the most bytes of an array chunk one data frame carries.
const chunkFrame = 4 << 20

// sendChunk streams one assembled new chunk, in frames of chunkFrame bytes.
func (r *Reader) sendChunk(ctx context.Context, q readReq, send func([]byte) error) error {
	c, err := r.GetChunk(ctx, q.Shuffle, q.Partition)
	if err != nil {
		return err
	}
	b, err := rechunk.AppendPiece(nil, c, wholeChunk(c.Shape))
	runtime.KeepAlive(c.Keep)
	if err != nil {
		return err
	}
	for len(b) > 0 {
		n := min(len(b), chunkFrame)
		if err := send(b[:n]); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// wholeChunk selects all of a chunk of shape.
func wholeChunk(shape []int64) []splitaxes.Slice {
	out := make([]splitaxes.Slice, len(shape))
	for a, n := range shape {
		out[a] = splitaxes.Slice{Start: 0, Stop: n}
	}
	return out
}
