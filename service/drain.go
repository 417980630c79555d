package service

import (
	"context"
	"log/slog"
	"slices"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/drain"
	"github.com/shufflenode/shufflenode/member"
	"github.com/shufflenode/shufflenode/receiver"
	"github.com/shufflenode/shufflenode/refusal"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/wire"
)

// ErrDraining: the node is draining (it leaves the cluster soon) and takes
// no new input task; it travels as ErrUnavailable, so a client runs the
// task on another node (package drain).
var ErrDraining = drain.ErrDraining

// DrainResult says how a drain ended (package drain).
type DrainResult = drain.Result

// RequestDrain asks the process that runs this node to drain it and stop,
// as SIGTERM does (the admin endpoint POST /drain and the Flight action
// "drain" call it). It does not block; calling it again does nothing.
func (s *Service) RequestDrain() { s.drain.Request() }

// DrainRequested returns a channel closed once RequestDrain was called.
func (s *Service) DrainRequested() <-chan struct{} { return s.drain.Requested() }

// Drain prepares the node to leave the cluster on purpose (drain.Drainer's
// Drain): new puts are refused with ErrDraining (as ErrUnavailable: the
// client runs the task elsewhere), the puts running finish, and each
// shuffle held is handed over where leaving would cost a replay. It blocks
// until then or until ctx ends (the drain then falls back to the loss
// path). The caller then leaves the cluster (member.Cluster.Leave) and
// closes the service. Puts stay refused after Drain returns. A second
// concurrent Drain fails with ErrConflict.
func (s *Service) Drain(ctx context.Context) (DrainResult, error) { return s.drain.Drain(ctx) }

// Draining reports whether the node refuses new puts because it drains.
func (s *Service) Draining() bool { return s.drain.Draining() }

// newDrainer builds the node's part of drains.
func (s *Service) newDrainer() *drain.Drainer {
	return drain.New(drain.Config{Host: drainHost{s}, Receiver: s.recv, PeerError: refusal.PeerError, Conflict: ErrConflict, Unavailable: ErrUnavailable,
		Coordinator: func() drain.Coordinator { return s.coord }})
}

// drainHost is what a drain needs of the service.
type drainHost struct{ s *Service }

func (h drainHost) Name() string                         { return h.s.Name() }
func (h drainHost) Log() *slog.Logger                    { return h.s.log }
func (h drainHost) CommitsBusy(st *shuffle.State) bool   { return h.s.reports.CommitsBusy(st) }
func (h drainHost) Publish(st *shuffle.State)            { h.s.publish(st) }
func (h drainHost) Go(fn func(ctx context.Context)) bool { return h.s.background(fn) }

func (h drainHost) Request(ctx context.Context, node string, c control.Msg) (control.Reply, error) {
	return h.s.request(ctx, node, c)
}

func (h drainHost) Send(ctx context.Context, node string, t wire.Type, body []byte) error {
	_, err := h.s.net.Request(ctx, node, t, body)
	return err
}

func (h drainHost) Lookup(id string) (*shuffle.State, *receiver.Shuffle, error) {
	sh, err := h.s.lookup(id)
	if err != nil {
		return nil, nil, err
	}
	return sh.State, sh.recv, nil
}

func (h drainHost) Held() []*shuffle.State {
	var out []*shuffle.State
	for _, sh := range h.s.held() {
		out = append(out, sh.State)
	}
	return out
}

// RunningPuts counts the puts this node runs, over every shuffle.
func (h drainHost) RunningPuts() int {
	n := 0
	for _, sh := range h.s.held() {
		sh.Lock()
		for _, done := range sh.puts {
			if !done {
				n++
			}
		}
		sh.Unlock()
	}
	return n
}

// IsMember reports whether node is a live member of the cluster now.
func (h drainHost) IsMember(node string) bool {
	return slices.ContainsFunc(h.s.net.Members(), func(m member.Member) bool { return m.Name == node })
}
