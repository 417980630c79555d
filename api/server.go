package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"syscall"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/budget"
	"github.com/shufflenode/shufflenode/dap"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/mempool"
	"github.com/shufflenode/shufflenode/parquetio"
	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/table"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Server serves the Flight API of one node.
type Server struct {
	flight.BaseFlightServer
	svc *service.Service
	mem memory.Allocator
	log *slog.Logger
	srv flight.Server
	// auth is how callers prove themselves ("bearer": a token), for the
	// Handshake reply; "" when they need not.
	auth string
	// roots are the directories ops may write files under (symlinks
	// resolved; see Security.OutputRoots).
	roots []string
	// inRoots are the directories puts may read input files under
	// (symlinks resolved; see Security.InputRoots).
	inRoots []string
	// plans are the Parquet writers' plans shared among the files of an op
	// (parquetio.WriteConfig.PlanKey).
	plans *parquetio.PlanCache
	// putQueue bounds the batches the node's puts of several tasks hold
	// queued for their tasks (puttasks.go), across every such call.
	putQueue *budget.Budget
	// packs holds the buffers of packed batches (pack.go) that gRPC has
	// written, for the next ones.
	packs mempool.Pool

	once    sync.Once
	started bool
	done    chan error
}

// Listen binds addr (host:port, port 0 for any) and returns a server ready
// to Serve, open to every caller in plaintext.
func Listen(addr string, svc *service.Service, log *slog.Logger) (*Server, error) {
	return ListenSecure(addr, svc, log, Security{})
}

// ListenSecure is Listen with the TLS and token of sec. It does not refuse
// an exposed address without either (see Exposed): its caller decides.
func ListenSecure(addr string, svc *service.Service, log *slog.Logger, sec Security) (*Server, error) {
	if log == nil {
		log = slog.Default()
	}
	opts, err := sec.serverOptions(log)
	if err != nil {
		return nil, err
	}
	roots, err := resolveRoots("output", sec.OutputRoots)
	if err != nil {
		return nil, err
	}
	inRoots, err := resolveRoots("input", sec.InputRoots)
	if err != nil {
		return nil, err
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("api: listen %s: %w", addr, err)
	}
	s := &Server{svc: svc, mem: memory.DefaultAllocator, log: log, auth: sec.authScheme(), roots: roots, inRoots: inRoots, plans: parquetio.NewPlanCache(), done: make(chan error, 1),
		putQueue: budget.New(putQueueBytes)}
	pool := flightproto.NewPool(flightproto.PoolConfig{PoisonReleased: sec.PoisonReleased})
	lim := sec.Limits.withDefaults()
	lis = newLimitListener(lis, lim.MaxConnections)
	if !sec.TLS() { // with TLS, the credentials scan the decrypted bytes
		lis = scanListener{Listener: lis, limit: uint32(lim.MaxCallMessage)}
	}
	s.srv = newFlightServer(s, pool, lis, opts...)
	return s, nil
}

// newFlightServer returns a gRPC Flight server of fs on lis, its message
// buffers from pool, with extra options (credentials, interceptors) after
// the shared ones (lis, or with TLS the credentials, scan the connections
// for the call message limit: msglimit.go).
func newFlightServer(fs flight.FlightServer, pool *flightproto.Pool, lis net.Listener, extra ...grpc.ServerOption) flight.Server {
	srv := flight.NewServerWithMiddleware(nil, append(pool.ServerOptions(), extra...)...)
	srv.RegisterFlightService(fs)
	srv.InitListener(lis)
	return srv
}

// newWriter returns the writer of a DoGet stream of schema. Every batch a
// DoGet sends is built for it (gathered, assembled or decoded into memory
// of its own) and never changed, so the writer shares its buffers with gRPC.
func (s *Server) newWriter(stream flight.FlightService_DoGetServer, schema *arrow.Schema) *flightproto.Writer {
	return flightproto.NewSharingWriter(stream, ipc.WithSchema(schema), ipc.WithAllocator(s.mem))
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.srv.Addr().String() }

// Start serves in the background until Close.
func (s *Server) Start() {
	s.started = true
	go func() { s.done <- s.srv.Serve() }()
}

// Close stops the server, waiting for calls in progress. Idempotent.
func (s *Server) Close() error {
	var err error
	s.once.Do(func() {
		if !s.started {
			return
		}
		s.srv.Shutdown()
		if e := <-s.done; e != nil && !errors.Is(e, grpc.ErrServerStopped) {
			err = e
		}
	})
	return err
}

// DoAction runs create, barrier, status and close.
func (s *Server) DoAction(a *flight.Action, stream flight.FlightService_DoActionServer) error {
	ctx := stream.Context()
	var reply any
	var err error
	switch a.Type {
	case flightproto.ActionCreate:
		reply, err = s.create(ctx, a.Body)
	case flightproto.ActionBarrier:
		reply, err = s.withRef(a.Body, func(id string) (any, error) { return s.barrier(ctx, id) })
	case flightproto.ActionStatus:
		reply, err = s.withRef(a.Body, func(id string) (any, error) { return s.status(id) })
	case flightproto.ActionClose:
		reply, err = s.withRef(a.Body, func(id string) (any, error) { return nil, s.svc.CloseShuffle(ctx, id) })
	case flightproto.ActionMembers:
		reply = s.members()
	case flightproto.ActionLayout:
		reply, err = s.withRef(a.Body, func(id string) (any, error) { return s.svc.Layout(id) })
	case flightproto.ActionDrain:
		reply = s.drain()
	default:
		return status.Errorf(codes.Unimplemented, "unknown action %q", a.Type)
	}
	if err != nil {
		return toStatus(err)
	}
	return sendJSON(stream, reply)
}

func (s *Server) create(ctx context.Context, body []byte) (any, error) {
	req := flightproto.CreateRequest{Spec: new(spec.Spec)}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("%w: create: %w", service.ErrBadInput, err)
	}
	if err := checkVersion(req.Version, req.Spec.ID); err != nil {
		return nil, err
	}
	if err := s.svc.Create(ctx, req.Spec); err != nil {
		return nil, err
	}
	return flightproto.CreateReply{Shuffle: req.Spec.ID, Coordinator: s.svc.Name(), Version: flightproto.ProtocolVersion}, nil
}

func (s *Server) barrier(ctx context.Context, id string) (any, error) {
	r, err := s.svc.Barrier(ctx, id)
	return flightproto.BarrierReply{Sealed: r.Sealed, Replay: r.Replay, Epoch: r.Epoch, ReplaySet: r.ReplaySet}, err
}

func (s *Server) withRef(body []byte, fn func(id string) (any, error)) (any, error) {
	var ref flightproto.ShuffleRef
	if err := json.Unmarshal(body, &ref); err != nil {
		return nil, fmt.Errorf("%w: %w", service.ErrBadInput, err)
	}
	return fn(ref.Shuffle)
}

func (s *Server) status(id string) (any, error) {
	info, err := s.svc.Info(id)
	if err != nil {
		return nil, err
	}
	st := flightproto.Status{Shuffle: id, Node: s.svc.Name(), Phase: info.Phase.String(), Coordinator: info.Coordinator,
		Tasks: info.Tasks, Partitions: info.Partitions, TasksDone: info.TasksDone}
	if info.Err != nil {
		st.Error = info.Err.Error()
	}
	return st, nil
}

func (s *Server) members() flightproto.MembersReply {
	r := flightproto.MembersReply{Version: flightproto.ProtocolVersion, Revision: flightproto.ProtocolRevision, Node: s.svc.Name(), Members: []flightproto.Member{}}
	for _, m := range s.svc.Members() {
		r.Members = append(r.Members, flightproto.Member{Name: m.Name, PeerID: m.PeerID, Addrs: m.Addrs, APIAddr: m.APIAddr, Gossip: m.GossipAddr})
	}
	return r
}

func sendJSON(stream flight.FlightService_DoActionServer, v any) error {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	return stream.Send(&flight.Result{Body: b})
}

// DoPut runs one input task attempt.
func (s *Server) DoPut(stream flight.FlightService_DoPutServer) error {
	// Put copies every record's rows (splitter.Cut) before the next: its
	// messages' buffers are pooled.
	rdr, err := flightproto.NewPooledReader(stream, s.mem)
	if errors.Is(err, io.EOF) {
		return status.Error(codes.InvalidArgument, "put: the stream ended before its schema message")
	}
	if err != nil {
		return toStatus(streamErr("put: reading the stream's schema", err))
	}
	defer rdr.Release()
	var cmd flightproto.PutCmd
	if d := rdr.LatestFlightDescriptor(); d == nil || json.Unmarshal(d.Cmd, &cmd) != nil {
		return status.Error(codes.InvalidArgument, "put: the descriptor's cmd must be a PutCmd as JSON")
	}
	if cmd.Tasks {
		return s.putTasks(stream, rdr, cmd)
	}
	next := func() (arrow.Record, error) {
		if rdr.Next() {
			return rdr.Record(), nil
		}
		if err := rdr.Err(); err != nil {
			return nil, streamErr(fmt.Sprintf("put of shuffle %s task %d attempt %d", cmd.Shuffle, cmd.Task, cmd.Attempt), err)
		}
		return nil, io.EOF
	}
	if cmd.File != "" {
		in, err := s.openInput(stream.Context(), cmd, rdr.Schema())
		if err != nil {
			return toStatus(err)
		}
		defer in.close()
		next = in.next
	}
	count := &inputCount{s: s, cmd: cmd, next: next}
	next = count.nextChecked
	var res service.PutResult
	if s.isArray(cmd.Shuffle) {
		res, err = s.putChunk(stream.Context(), cmd, next)
	} else {
		res, err = s.svc.Put(stream.Context(), cmd.Shuffle, cmd.Task, cmd.Attempt, rdr.Schema(), next)
	}
	if err != nil {
		return toStatus(err)
	}
	b, _ := json.Marshal(putReply(res, count))
	return stream.Send(&flight.PutResult{AppMetadata: b})
}

// putReply is a put's reply: the rows the node read (an array chunk is one
// row); all zero when the put was skipped, which uses none of its input.
func putReply(res service.PutResult, count *inputCount) flightproto.PutReply {
	if res.Skipped {
		return flightproto.PutReply{Skipped: true}
	}
	return flightproto.PutReply{Rows: count.rows, Bytes: res.Bytes, InputBytes: count.bytes}
}

// inputCount wraps a put's next: it counts the rows and Arrow bytes of the
// input and, at its end, fails the put when cmd declared another count.
type inputCount struct {
	s           *Server
	cmd         flightproto.PutCmd
	next        func() (arrow.Record, error)
	rows, bytes uint64
}

func (c *inputCount) nextChecked() (arrow.Record, error) {
	rec, err := c.next()
	if err == nil {
		c.rows += uint64(rec.NumRows())
		c.bytes += uint64(table.RecordBytes(rec))
		return rec, nil
	}
	if err == io.EOF && c.cmd.Rows != 0 && c.rows != c.cmd.Rows {
		return nil, fmt.Errorf("%w: the input of shuffle %s task %d ended after %d rows, but the put declared %d (node %s)",
			service.ErrBadInput, c.cmd.Shuffle, c.cmd.Task, c.rows, c.cmd.Rows, c.s.svc.Name())
	}
	return nil, err
}

// GetFlightInfo lists every output partition with its owner.
func (s *Server) GetFlightInfo(ctx context.Context, d *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	var ref flightproto.ShuffleRef
	if err := json.Unmarshal(d.Cmd, &ref); err != nil {
		return nil, status.Error(codes.InvalidArgument, "descriptor cmd must be a ShuffleRef as JSON")
	}
	locs, err := s.svc.Locations(ref.Shuffle)
	if err != nil {
		return nil, toStatus(err)
	}
	schema, err := s.outputSchema(ref.Shuffle)
	if err != nil {
		return nil, toStatus(err)
	}
	info := &flight.FlightInfo{Schema: flightproto.SerializeSchema(schema, s.mem), FlightDescriptor: d, TotalRecords: -1, TotalBytes: -1}
	for _, l := range locs {
		t, _ := json.Marshal(flightproto.Ticket{Shuffle: ref.Shuffle, Partition: l.Partition})
		info.Endpoint = append(info.Endpoint, &flight.FlightEndpoint{
			Ticket:   &flight.Ticket{Ticket: t},
			Location: []*flight.Location{{Uri: "grpc+tcp://" + l.APIAddr}},
		})
	}
	return info, nil
}

// DoGet streams one output partition, from the owner or through it.
// An OpTicket runs a join or sort on this node instead (see op.go).
func (s *Server) DoGet(t *flight.Ticket, stream flight.FlightService_DoGetServer) error {
	if isOpTicket(t.Ticket) {
		return s.doOp(t.Ticket, stream)
	}
	var tk flightproto.Ticket
	if err := json.Unmarshal(t.Ticket, &tk); err != nil {
		return status.Error(codes.InvalidArgument, "ticket must be a Ticket as JSON")
	}
	if tk.Many() {
		return s.doGetMany(tk, stream)
	}
	schema, err := s.partitionSchema(tk)
	if err != nil {
		return toStatus(err)
	}
	w := s.newWriter(stream, schema)
	if s.isArray(tk.Shuffle) {
		err = s.chunkTo(stream.Context(), tk, w)
	} else {
		// the batches' buffers are pooled: the writer releases each once
		// gRPC has written what it shares
		err = s.svc.GetPooled(stream.Context(), tk.Shuffle, tk.Partition, w.WriteReleased)
		if errors.Is(err, service.ErrNotOwner) {
			err = s.proxy(stream.Context(), tk, w)
		}
	}
	if err != nil {
		return toStatus(err)
	}
	return w.Close()
}

// isArray reports whether id names an array shuffle on this node.
func (s *Server) isArray(id string) bool {
	k, err := s.svc.Kind(id)
	return err == nil && k == spec.Array
}

// outputSchema is the schema of a shuffle's DoGet streams.
func (s *Server) outputSchema(id string) (*arrow.Schema, error) {
	k, err := s.svc.Kind(id)
	if err != nil {
		return nil, err
	}
	if k != spec.Array {
		return s.svc.Schema(id)
	}
	in, err := s.svc.Info(id)
	if err != nil {
		return nil, err
	}
	return flightproto.ArraySchema(in.Spec.DType), nil
}

// partitionSchema is the schema of the DoGet stream of tk's partition: the
// shuffle's output schema, and for an array partition its DAP description
// (the dim_data of the process whose local array it is) as metadata. A
// partition out of range gets none: reading it fails with its own error.
func (s *Server) partitionSchema(tk flightproto.Ticket) (*arrow.Schema, error) {
	schema, err := s.outputSchema(tk.Shuffle)
	if err != nil || !s.isArray(tk.Shuffle) {
		return schema, err
	}
	in, err := s.svc.Info(tk.Shuffle)
	if err != nil {
		return nil, err
	}
	out := dap.Output(in.Spec)
	if tk.Partition < 0 || tk.Partition >= out.NumProcs() {
		return schema, nil
	}
	local, err := json.Marshal(out.DimData(tk.Partition))
	if err != nil {
		return nil, fmt.Errorf("shuffle %s partition %d: dim_data: %w", tk.Shuffle, tk.Partition, err)
	}
	return flightproto.PartitionSchema(in.Spec.DType, local), nil
}

// putChunk reads the one chunk of an array put and runs it.
func (s *Server) putChunk(ctx context.Context, cmd flightproto.PutCmd, next func() (arrow.Record, error)) (service.PutResult, error) {
	c, release, err := flightproto.ChunkFromRecords(next)
	defer release() // PutChunk has cut the chunk into its own buffers when it returns
	if err != nil {
		return service.PutResult{}, fmt.Errorf("%w: shuffle %s task %d: %w", service.ErrBadInput, cmd.Shuffle, cmd.Task, err)
	}
	return s.svc.PutChunk(ctx, cmd.Shuffle, cmd.Task, cmd.Attempt, c)
}

// chunkTo writes new chunk tk.Partition as one record: this node's, or its
// owner's through this node.
func (s *Server) chunkTo(ctx context.Context, tk flightproto.Ticket, w *flightproto.Writer) error {
	err := s.getChunk(ctx, tk, w)
	if errors.Is(err, service.ErrNotOwner) {
		err = s.proxy(ctx, tk, w)
	}
	return err
}

// getChunk writes one assembled new chunk as one record.
func (s *Server) getChunk(ctx context.Context, tk flightproto.Ticket, w *flightproto.Writer) error {
	c, err := s.svc.GetChunk(ctx, tk.Shuffle, tk.Partition)
	if err != nil {
		return err
	}
	rec := flightproto.ChunkRecord(c)
	defer rec.Release()
	return w.WriteKept(rec, c.Keep)
}

// proxy reads a partition this node does not own from its owner, over the
// cluster's own streams (TLS, private-network key), and relays it.
func (s *Server) proxy(ctx context.Context, tk flightproto.Ticket, w *flightproto.Writer) error {
	if s.isArray(tk.Shuffle) {
		c, err := s.svc.FetchChunk(ctx, tk.Shuffle, tk.Partition)
		if err != nil {
			return err
		}
		rec := flightproto.ChunkRecord(c)
		defer rec.Release()
		return w.WriteKept(rec, c.Keep)
	}
	return s.svc.Fetch(ctx, tk.Shuffle, tk.Partition, func(rec arrow.Record) error {
		defer rec.Release()
		return w.Write(rec)
	})
}

// streamErr is err, an error reading a Flight stream, made a bad input
// (InvalidArgument) when it is about the bytes the caller sent.
func streamErr(what string, err error) error {
	if errors.Is(err, flightproto.ErrMalformed) {
		return fmt.Errorf("%w: %s: %w", service.ErrBadInput, what, err)
	}
	return err
}

// toStatus maps service errors to gRPC status codes; an error that already
// carries a gRPC status (the stream's own) keeps its code.
func toStatus(err error) error {
	code := codes.Internal
	if st, ok := status.FromError(err); ok && st.Code() != codes.Unknown && st.Code() != codes.OK {
		code = st.Code()
	}
	switch {
	case errors.Is(err, service.ErrUnknownShuffle):
		code = codes.NotFound
	case errors.Is(err, service.ErrBadInput), errors.Is(err, spec.ErrInvalid):
		code = codes.InvalidArgument
	case errors.Is(err, service.ErrExists), errors.Is(err, service.ErrConflict):
		code = codes.AlreadyExists
	case errors.Is(err, service.ErrNotSealed), errors.Is(err, service.ErrSealed), errors.Is(err, service.ErrNotOwner):
		code = codes.FailedPrecondition
	case errors.Is(err, service.ErrStaleEpoch):
		code = codes.Unavailable // before ErrFailed: the attempt is stale, run a new one
	case errors.Is(err, service.ErrReplayDiffers):
		code = codes.DataLoss // before ErrFailed: a replay's rows differ from the first attempt's
	case errors.Is(err, service.ErrFailed):
		code = codes.Aborted
	case errors.Is(err, service.ErrLimit), errors.Is(err, syscall.ENOSPC):
		code = codes.ResourceExhausted
	case errors.Is(err, service.ErrUnavailable), errors.Is(err, service.ErrClosed):
		code = codes.Unavailable
	case errors.Is(err, ErrVersion):
		code = codes.Unimplemented
	case errors.Is(err, ErrWriteRefused), errors.Is(err, ErrReadRefused):
		code = codes.PermissionDenied
	case errors.Is(err, context.Canceled):
		code = codes.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		code = codes.DeadlineExceeded
	}
	return status.Error(code, err.Error())
}
