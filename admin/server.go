package admin

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Options are the admin server's choices beyond its data source.
type Options struct {
	// Pprof serves Go's profiles under /debug/pprof/. Off by default: a
	// profile costs CPU while it runs and shows the node's internals.
	Pprof bool
	// IdleTimeout closes a kept-alive connection that sends no request for
	// this long (default DefaultIdleTimeout); ReadTimeout bounds reading one
	// request, headers included (default DefaultReadTimeout).
	IdleTimeout, ReadTimeout time.Duration
}

// withDefaults fills in the zero fields.
func (o Options) withDefaults() Options {
	o.IdleTimeout = cmp.Or(o.IdleTimeout, DefaultIdleTimeout)
	o.ReadTimeout = cmp.Or(o.ReadTimeout, DefaultReadTimeout)
	return o
}

// Server is a node's admin HTTP server.
type Server struct {
	src  Source
	opts Options
	http *http.Server
	lis  net.Listener
	done chan error
}

// Listen binds addr and returns a server ready to Start. Its endpoints
// have no authentication: bind it to loopback (or behind a network policy).
func Listen(addr string, src Source, opts Options) (*Server, error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("admin: listen %s: %w", addr, err)
	}
	reg := prometheus.NewRegistry()
	if err := reg.Register(newCollector(src)); err != nil {
		lis.Close()
		return nil, err
	}
	s := &Server{src: src, opts: opts, lis: lis, done: make(chan error, 1)}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /status", s.status)
	mux.HandleFunc("POST /drain", s.drain)
	mux.HandleFunc("GET /{$}", s.page)
	mux.HandleFunc("GET /ui", s.page)
	if opts.Pprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	o := opts.withDefaults()
	s.http = &http.Server{Handler: mux, ReadHeaderTimeout: o.ReadTimeout, ReadTimeout: o.ReadTimeout,
		WriteTimeout: WriteTimeout, IdleTimeout: o.IdleTimeout, MaxHeaderBytes: maxHeaderBytes}
	return s, nil
}

// The admin server's limits: a client that sends slowly, reads slowly or
// idles is cut off, so connections cannot pile up. A CPU profile or trace
// (?seconds=N) must end within WriteTimeout (net/http/pprof refuses a
// longer one).
const (
	DefaultReadTimeout = 10 * time.Second // GET requests: no body to wait for
	DefaultIdleTimeout = time.Minute
	WriteTimeout       = 2 * time.Minute
	maxHeaderBytes     = 64 << 10
)

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.lis.Addr().String() }

// Start serves in the background until Close.
func (s *Server) Start() { go func() { s.done <- s.http.Serve(s.lis) }() }

// Close stops the server.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.http.Shutdown(ctx)
	if e := <-s.done; e != nil && !errors.Is(e, http.ErrServerClosed) {
		err = errors.Join(err, e)
	}
	return err
}

// StatusReply is the JSON of GET /status.
type StatusReply struct {
	Node     string          `json:"node"`
	Members  []string        `json:"members"`
	Shuffles []ShuffleStatus `json:"shuffles"`
}

// ShuffleStatus is one shuffle in StatusReply.
type ShuffleStatus struct {
	ID          string `json:"id"`
	Phase       string `json:"phase"`
	Coordinator string `json:"coordinator"`
	Tasks       int    `json:"tasks"`
	TasksDone   int    `json:"tasks_done,omitempty"`
	Partitions  int    `json:"partitions"`
	MemoryBytes int64  `json:"memory_bytes"`
	SpillBytes  int64  `json:"spilled_bytes"`
	// BytesOut, RowsOut and Reads are what reads of this node's output
	// partitions handed out (DoGets here, peers' fetches, node-side ops).
	BytesOut int64  `json:"bytes_out"`
	RowsOut  int64  `json:"rows_out"`
	Reads    int64  `json:"reads"`
	Error    string `json:"error,omitempty"`
	// Progress is the coordinator's view (nil on other nodes).
	Progress *ShuffleProgress `json:"progress,omitempty"`
}

// ShuffleProgress is what the coordinator knows of a shuffle's progress.
type ShuffleProgress struct {
	TasksCommitted int `json:"tasks_committed"`
	// Epoch is the number of nodes lost since the create.
	Epoch int `json:"epoch"`
	// Rows and Bytes are what the finished tasks sent (put into the shuffle).
	Rows  uint64 `json:"rows"`
	Bytes uint64 `json:"bytes"`
	// Replayed is how many finished tasks lost nodes took with them.
	Replayed int `json:"replayed"`
	// SealSeconds is the time from create to the seal (0 while not sealed).
	SealSeconds float64 `json:"seal_seconds"`
}

func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(s.snapshot())
}

// snapshot is the node's status: its members and its shuffles by ID.
func (s *Server) snapshot() StatusReply {
	svc := s.src.Service
	rep := StatusReply{Node: svc.Name(), Shuffles: []ShuffleStatus{}}
	for _, m := range svc.Members() {
		rep.Members = append(rep.Members, m.Name)
	}
	store := svc.Stats().Store.Shuffles
	ids := svc.Shuffles()
	slices.Sort(ids)
	for _, id := range ids {
		in, err := svc.Info(id)
		if err != nil {
			continue // closed meanwhile
		}
		st := ShuffleStatus{ID: id, Phase: in.Phase.String(), Coordinator: in.Coordinator, Tasks: in.Tasks,
			TasksDone: in.TasksDone, Partitions: in.Partitions,
			MemoryBytes: store[id].MemoryBytes, SpillBytes: store[id].SpilledBytes, Progress: s.progress(id),
			BytesOut: in.Reads.Bytes, RowsOut: in.Reads.Rows, Reads: in.Reads.Reads}
		if in.Err != nil {
			st.Error = in.Err.Error()
		}
		rep.Shuffles = append(rep.Shuffles, st)
	}
	return rep
}

// progress is the coordinator's progress of shuffle id, or nil when this
// node does not coordinate it.
func (s *Server) progress(id string) *ShuffleProgress {
	p, err := s.src.Service.Progress(id)
	if err != nil {
		return nil
	}
	return &ShuffleProgress{TasksCommitted: p.TasksCommitted, Epoch: p.Epoch, Rows: p.Totals.Rows, Bytes: p.Totals.Bytes,
		Replayed: p.ReplaySet, SealSeconds: p.SealAfter.Seconds()}
}
