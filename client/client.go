package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/spec"
)

// Client is a connection to one node, plus a pool of connections to the
// owners of output partitions.
type Client struct {
	addr string
	auth flightproto.ClientAuth
	// pool holds the message buffers of every connection of the client.
	pool *flightproto.Pool
	home *conns

	mu    sync.Mutex
	peers map[string]*conns
}

// Dial connects to the node whose API listens at addr (host:port), in
// plaintext without a token.
func Dial(addr string) (*Client, error) { return DialAuth(addr, flightproto.ClientAuth{}) }

// DialAuth connects to the node whose API listens at addr with a's TLS
// settings and token; connections to other members (the owners of output
// partitions) use them too.
func DialAuth(addr string, a flightproto.ClientAuth) (*Client, error) {
	return dialPool(addr, a, flightproto.NewPool(flightproto.PoolConfig{}))
}

// dialPool is DialAuth with the message buffers of pool.
func dialPool(addr string, a flightproto.ClientAuth, pool *flightproto.Pool) (*Client, error) {
	cs, err := dialConns(addr, a, pool)
	if err != nil {
		return nil, fmt.Errorf("client: dial %s: %w", addr, err)
	}
	return &Client{addr: addr, auth: a, pool: pool, home: cs, peers: map[string]*conns{addr: cs}}, nil
}

// Addr is the node's API address.
func (c *Client) Addr() string { return c.addr }

// Close closes every connection.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, p := range c.peers {
		errs = append(errs, p.close())
	}
	c.peers = map[string]*conns{}
	return errors.Join(errs...)
}

// connsPerAddr is how many gRPC connections a Client keeps to each node:
// the puts and reads of one node take them in turn, so that they do not
// queue behind one connection's reading and writing goroutines.
const connsPerAddr = 2

// conns are the connections to one node.
type conns struct {
	fcs  []flight.Client
	next atomic.Uint32
}

func dialConns(addr string, a flightproto.ClientAuth, pool *flightproto.Pool) (*conns, error) {
	cs := &conns{}
	for range connsPerAddr {
		fc, err := pool.DialAuth(addr, a)
		if err != nil {
			cs.close()
			return nil, err
		}
		cs.fcs = append(cs.fcs, fc)
	}
	return cs, nil
}

// pick returns the next connection in turn.
func (cs *conns) pick() flight.Client {
	return cs.fcs[cs.next.Add(1)%uint32(len(cs.fcs))]
}

func (cs *conns) close() error {
	var errs []error
	for _, fc := range cs.fcs {
		errs = append(errs, fc.Close())
	}
	return errors.Join(errs...)
}

// action runs a Flight action and decodes its first result into out (if
// non-nil).
func (c *Client) action(ctx context.Context, typ string, body any, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	stream, err := c.home.pick().DoAction(ctx, &flight.Action{Type: typ, Body: b})
	if err != nil {
		return err
	}
	for {
		r, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if out != nil {
			if err := json.Unmarshal(r.Body, out); err != nil {
				return err
			}
		}
	}
}

// Create creates a shuffle; the node becomes its coordinator. The request
// states the protocol version this client speaks.
func (c *Client) Create(ctx context.Context, sp *spec.Spec) error {
	req := flightproto.CreateRequest{Spec: sp, Version: flightproto.ProtocolVersion}
	return c.action(ctx, flightproto.ActionCreate, req, nil)
}

// Barrier waits until the shuffle is sealed on every member, or until some
// tasks must run again (a node was lost, or their puts failed): then Replay
// lists them. Call it when no put is in flight.
func (c *Client) Barrier(ctx context.Context, shuffle string) (flightproto.BarrierReply, error) {
	var r flightproto.BarrierReply
	err := c.action(ctx, flightproto.ActionBarrier, flightproto.ShuffleRef{Shuffle: shuffle}, &r)
	return r, err
}

// Status returns the node's view of a shuffle.
func (c *Client) Status(ctx context.Context, shuffle string) (flightproto.Status, error) {
	var st flightproto.Status
	err := c.action(ctx, flightproto.ActionStatus, flightproto.ShuffleRef{Shuffle: shuffle}, &st)
	return st, err
}

// Members lists the cluster's members as the node sees them.
func (c *Client) Members(ctx context.Context) ([]flightproto.Member, error) {
	var r membersReply
	err := c.action(ctx, flightproto.ActionMembers, struct{}{}, &r)
	return r.Members, err
}

// membersReply decodes the members reply: a MembersReply, or the bare list
// of members that nodes sent before protocol version 1.
type membersReply flightproto.MembersReply

func (r *membersReply) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '[' {
		return json.Unmarshal(b, &r.Members)
	}
	return json.Unmarshal(b, (*flightproto.MembersReply)(r))
}

// CloseShuffle frees a shuffle on every member.
func (c *Client) CloseShuffle(ctx context.Context, shuffle string) error {
	return c.action(ctx, flightproto.ActionClose, flightproto.ShuffleRef{Shuffle: shuffle}, nil)
}

// Put sends one input task attempt: the records yielded by next until it
// returns io.EOF (Put does not release them). Their buffers go to gRPC by
// reference (flightproto.NewSharingWriter), so they must not change until
// Put returns: after a successful Put, the server has read every byte. A
// Put that fails can return while gRPC still copies a batch into frames of
// the dead stream: release the records then, but let the garbage collector
// have memory that a pool would hand out again (Go memory, as
// memory.GoAllocator's, is kept alive by gRPC's references).
//
// When next fails, Put aborts the call rather than ending the stream: the
// server then fails the attempt, where a stream that ended cleanly would
// make the records sent so far the whole task (and a retry of the task be
// skipped as done, its other rows lost).
func (c *Client) Put(ctx context.Context, cmd flightproto.PutCmd, schema *arrow.Schema, next func() (arrow.Record, error)) (flightproto.PutReply, error) {
	ctx, abort := context.WithCancel(ctx)
	defer abort()
	stream, err := c.home.pick().DoPut(ctx)
	if err != nil {
		return flightproto.PutReply{}, err
	}
	w := flightproto.NewSharingWriter(stream, ipc.WithSchema(schema))
	d, _ := json.Marshal(cmd)
	w.SetFlightDescriptor(&flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: d})
	if err := writeAll(w, next); err != nil {
		var in inputError
		if errors.As(err, &in) {
			abort()
			return flightproto.PutReply{}, in.err
		}
		_ = stream.CloseSend()
		if errors.Is(err, io.EOF) {
			return putReply(stream) // the server ended the call early: its reply or status says why
		}
		return flightproto.PutReply{}, err
	}
	if err := stream.CloseSend(); err != nil {
		return flightproto.PutReply{}, err
	}
	return putReply(stream)
}

// inputError is an error of a Put's next, as writeAll returns it (apart
// from the stream's own errors).
type inputError struct{ err error }

func (e inputError) Error() string { return e.err.Error() }

// writeAll writes the records of next until it returns io.EOF, then ends
// the IPC stream. An error of next comes back as an inputError.
func writeAll(w *flightproto.Writer, next func() (arrow.Record, error)) error {
	for {
		rec, err := next()
		if err == io.EOF { // io.EOF itself: a wrapped one is an input that failed
			return w.Close()
		}
		if err != nil {
			return inputError{err}
		}
		if err := w.Write(rec); err != nil {
			return err
		}
	}
}

// putReply reads the server's reply (and its error) to a DoPut.
func putReply(stream flight.FlightService_DoPutClient) (flightproto.PutReply, error) {
	var reply flightproto.PutReply
	for {
		r, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return reply, nil
		}
		if err != nil {
			return reply, err
		}
		if err := json.Unmarshal(r.AppMetadata, &reply); err != nil {
			return reply, err
		}
	}
}

// Endpoint is where one output partition is read.
type Endpoint struct {
	Partition int
	Addr      string // owner's API address
	Ticket    []byte
}

// Locations lists every output partition with its owner.
func (c *Client) Locations(ctx context.Context, shuffle string) ([]Endpoint, error) {
	d, _ := json.Marshal(flightproto.ShuffleRef{Shuffle: shuffle})
	info, err := c.home.pick().GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: d})
	if err != nil {
		return nil, err
	}
	eps := make([]Endpoint, len(info.Endpoint))
	for i, e := range info.Endpoint {
		eps[i] = Endpoint{Partition: i, Ticket: e.Ticket.Ticket}
		if len(e.Location) > 0 {
			eps[i].Addr = strings.TrimPrefix(e.Location[0].Uri, "grpc+tcp://")
		}
	}
	return eps, nil
}

// Read streams the records of one output partition from its owner to fn,
// which must not keep a record, or any slice of its buffers, past its call
// without Retain: a released record's memory is reused for later
// messages (flightproto.NewPooledReader).
func (c *Client) Read(ctx context.Context, ep Endpoint, fn func(arrow.Record) error) error {
	fc, err := c.peer(ep.Addr)
	if err != nil {
		return err
	}
	stream, err := fc.DoGet(ctx, &flight.Ticket{Ticket: ep.Ticket})
	if err != nil {
		return err
	}
	rdr, err := flightproto.NewPooledReader(stream, memory.DefaultAllocator)
	if err != nil {
		return fmt.Errorf("client: partition %d from %s: %w", ep.Partition, ep.Addr, err)
	}
	defer rdr.Release()
	for rdr.Next() {
		if err := fn(rdr.Record()); err != nil {
			return err
		}
	}
	return rdr.Err()
}

// ReadChunk reads one new chunk of an array shuffle from its owner. The
// chunk's data is the caller's, for as long as it likes (Go memory).
func (c *Client) ReadChunk(ctx context.Context, ep Endpoint) (rechunk.Chunk, error) {
	ch, _, _, err := c.readChunk(ctx, ep)
	return ch, err
}

// readChunk reads one new chunk of an array shuffle and the DAP
// description its stream's schema carries (nil when the node sent none).
// The chunk's data is a received message's buffer: release hands it back
// to the pool once nothing uses the data (see VisitChunk); a chunk never
// released is the garbage collector's. release is never nil.
func (c *Client) readChunk(ctx context.Context, ep Endpoint) (ch rechunk.Chunk, dimData []byte, release func(), err error) {
	var recs []arrow.Record
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	err = c.Read(ctx, ep, func(r arrow.Record) error {
		r.Retain()
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		return rechunk.Chunk{}, nil, func() {}, err
	}
	i := 0
	ch, release, err = flightproto.ChunkFromRecords(func() (arrow.Record, error) {
		if i == len(recs) {
			return nil, io.EOF
		}
		i++
		return recs[i-1], nil
	})
	if err != nil {
		return ch, nil, release, err
	}
	local, _ := flightproto.DimDataOf(recs[0].Schema())
	return ch, local, release, nil
}

// Layout returns an array shuffle's layout (the __partitioned__ form).
func (c *Client) Layout(ctx context.Context, shuffle string) (flightproto.Layout, error) {
	var l flightproto.Layout
	err := c.action(ctx, flightproto.ActionLayout, flightproto.ShuffleRef{Shuffle: shuffle}, &l)
	return l, err
}

// peer returns a pooled connection to addr.
func (c *Client) peer(addr string) (flight.Client, error) {
	if addr == "" || addr == c.addr {
		return c.home.pick(), nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if p, ok := c.peers[addr]; ok {
		return p.pick(), nil
	}
	p, err := dialConns(addr, c.auth, c.pool)
	if err != nil {
		return nil, err
	}
	c.peers[addr] = p
	return p.pick(), nil
}
