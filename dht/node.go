package dht

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/memberlist"
	kaddht "github.com/libp2p/go-libp2p-kad-dht"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	"golang.org/x/sync/semaphore"

	"github.com/shufflenode/shufflenode/member"
	"github.com/shufflenode/shufflenode/wire"
)

// Member is one node of the cluster as the others see it (member.Member).
type Member = member.Member

// Handler serves one request frame from a peer and returns the reply
// frame's type (wire.TypeAck, wire.TypeBusy or wire.TypeRefused) and
// payload. It is called on a per-stream goroutine and may block; the
// sender's Request waits for it. req.Payload is the handler's to keep: it
// was allocated for this request and the node never reuses it (a request
// to the node itself passes the caller's payload, which Request's caller
// leaves alone afterwards), so a handler can decode and store data in place.
// from.Name is empty if the peer is not (yet) a known member. ctx is
// cancelled when the Node closes.
type Handler func(ctx context.Context, from Member, req wire.Frame) (replyType wire.Type, reply []byte)

// Node is one member of the cluster: a libp2p host, a kad-dht instance and
// a memberlist instance. All methods are safe for concurrent use.
type Node struct {
	cfg     Config
	log     *slog.Logger
	handler Handler
	boot    uint64
	host    host.Host
	kad     *kaddht.IpfsDHT
	ml      *memberlist.Memberlist
	self    Member
	stats   counters
	inbound *semaphore.Weighted // payload bytes of requests being read and handled
	gate    *gate               // admits only members' libp2p connections

	recordVersion atomic.Uint64 // last version PutRecord used

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc

	lifeMu  sync.Mutex  // serialises Leave and Close around memberlist
	leaving atomic.Bool // advertised in metadata once Leave starts
	closing atomic.Bool // set as Close begins (its logger's cue)

	mu      sync.Mutex
	closed  bool
	members map[string]memberEntry // by name, excluding self
	byPeer  map[peer.ID]string
	signers map[peer.ID]struct{} // every member's peer ID listed since start (signed records)
	subs    map[*member.Queue]struct{}
	wg      sync.WaitGroup // stream handlers, dials, subscriber pumps
	// dials counts this node's own calls that may dial (Connect, NewStream):
	// Close waits for them before it closes the host (see beginDial).
	dials sync.WaitGroup

	closeOnce sync.Once
	closeErr  error

	pools map[string]*peerPool // under mu: idle request streams by member name (streams.go)

	streamHandler atomic.Pointer[StreamHandler] // serves TypeRead requests (stream.go)
}

// New starts a node: it loads (or creates) its identity, starts the libp2p
// host, kad-dht and memberlist, and joins the seeds in cfg.Join. It fails
// with ErrJoin if seeds are given and none can be contacted. h serves the
// requests of other members (and this node's requests to itself).
func New(ctx context.Context, cfg Config, h Handler) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if h == nil {
		return nil, fmt.Errorf("%w: nil Handler for node %s", ErrConfig, cfg.Name)
	}
	n := &Node{
		cfg: cfg.withDefaults(), handler: h, boot: randomUint64(),
		members: map[string]memberEntry{}, byPeer: map[peer.ID]string{}, signers: map[peer.ID]struct{}{}, subs: map[*member.Queue]struct{}{},
		gate: newGate(),
	}
	n.inbound = semaphore.NewWeighted(n.cfg.MaxInboundBytes)
	n.log = n.cfg.Logger.With("node", cfg.Name)
	n.ctx, n.cancel = context.WithCancel(context.Background())
	if err := n.start(ctx); err != nil {
		return nil, errors.Join(err, n.Close())
	}
	return n, nil
}

// start brings up the parts in order; Close tears down whatever started.
func (n *Node) start(ctx context.Context) error {
	key, err := loadIdentity(n.cfg.DataDir)
	if err != nil {
		return fmt.Errorf("node %s: %w", n.cfg.Name, err)
	}
	if n.host, err = newHost(n.cfg, key, n.gate); err != nil {
		return err
	}
	if n.kad, err = newKad(n.host, recordValidator{rules: n.cfg.RecordRules, isMember: n.isSigner}); err != nil {
		return fmt.Errorf("dht: node %s: kad-dht: %w", n.cfg.Name, err)
	}
	n.host.SetStreamHandler(PeerProtocol, n.serveStream)
	n.host.SetStreamHandler(StreamProtocol, n.serveRead)
	if err := n.startMemberlist(ctx); err != nil {
		return err
	}
	if err := n.join(ctx); err != nil {
		return err
	}
	if len(n.cfg.Join) > 0 && n.cfg.RejoinInterval > 0 {
		n.goTracked(n.rejoinLoop)
	}
	return nil
}

func (n *Node) startMemberlist(ctx context.Context) error {
	mc := n.cfg.memberlistConfig()
	if err := resolveAdvertise(ctx, mc); err != nil {
		return err
	}
	mc.Delegate = (*metaDelegate)(n)
	mc.Events = (*eventDelegate)(n)
	mc.Logger = newMemberlistLogger(n.log, n.closing.Load)
	n.self = Member{
		Name: n.cfg.Name, PeerID: n.host.ID().String(),
		Addrs: addrStrings(n.host.Addrs()), APIAddr: n.cfg.APIAddr,
	}
	ml, err := memberlist.Create(mc)
	if err != nil {
		return fmt.Errorf("dht: node %s: memberlist: %w", n.cfg.Name, err)
	}
	n.mu.Lock()
	n.ml = ml
	n.self.GossipAddr = ml.LocalNode().Address()
	n.mu.Unlock()
	return nil
}

// join contacts the seeds, trying again with backoff for up to
// Config.JoinWait while none answers (see joinOnce). Memberlist runs
// meanwhile, so seeds that come up may join this node instead.
func (n *Node) join(ctx context.Context) error {
	if len(n.cfg.Join) == 0 {
		return nil
	}
	if n.cfg.JoinWait < 0 {
		return n.joinRetrying(ctx)
	}
	if n.cfg.JoinWait > 0 {
		ctx, cancel := context.WithTimeout(ctx, n.cfg.JoinWait)
		defer cancel()
		return n.joinRetrying(ctx)
	}
	return n.joinOnce(ctx)
}

// Backoff of joinRetrying: the first wait and the longest.
const (
	joinRetryFirst = 500 * time.Millisecond
	joinRetryMax   = 15 * time.Second
)

// joinRetrying calls joinOnce until it succeeds, a member joined this node
// meanwhile, or ctx ends (then the last error).
func (n *Node) joinRetrying(ctx context.Context) error {
	wait := joinRetryFirst
	for {
		err := n.joinOnce(ctx)
		switch {
		case err == nil, n.ml.NumMembers() > 1: // joined, or a member joined this node
			return nil
		case ctx.Err() != nil:
			return err
		}
		n.log.Warn("no seed answered: trying again", "seeds", n.cfg.Join, "in", wait, "err", err)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, joinRetryMax)
	}
}

// joinOnce contacts the seeds; memberlist's Join blocks, so it runs on its
// own goroutine and ctx can abandon it (Close then shuts memberlist down).
func (n *Node) joinOnce(ctx context.Context) error {
	done := make(chan error, 1)
	n.goTracked(func() {
		k, err := n.ml.Join(n.cfg.Join)
		if k > 0 && err != nil {
			n.log.Warn("some seeds unreachable", "seeds", n.cfg.Join, "err", err)
			err = nil
		}
		done <- err
	})
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("%w: node %s, seeds %v: %v", ErrJoin, n.cfg.Name, n.cfg.Join, err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%w: node %s: %w", ErrJoin, n.cfg.Name, ctx.Err())
	}
}

// Self returns this node as a Member.
func (n *Node) Self() Member {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.self.Clone()
}

// Members returns the live members, this node included, sorted by Name. A
// member listed here can be sent a Request at once: its addresses are in
// the libp2p peerstore before it is listed.
func (n *Node) Members() []Member {
	n.mu.Lock()
	out := make([]Member, 0, len(n.members)+1)
	out = append(out, n.self.Clone())
	for _, e := range n.members {
		out = append(out, e.member.Clone())
	}
	n.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Leave tells the cluster that this node is leaving: it first gossips a
// "leaving" flag in its metadata, then memberlist's leave message, waiting
// up to timeout for each to go out. The others see MemberLeave at once
// (MemberFail if they missed the flag) instead of MemberFail after the
// failure detector's delay. The node keeps serving requests until Close.
func (n *Node) Leave(timeout time.Duration) error {
	n.lifeMu.Lock()
	defer n.lifeMu.Unlock()
	if n.isClosed() {
		return fmt.Errorf("%w: node %s", ErrClosed, n.cfg.Name)
	}
	n.leaving.Store(true)
	if err := n.awaitBroadcast(timeout, n.ml.UpdateNode); err != nil {
		n.log.Warn("leaving flag not broadcast", "err", err)
	}
	if err := n.awaitBroadcast(timeout, n.ml.Leave); err != nil {
		return fmt.Errorf("dht: node %s: leave: %w", n.cfg.Name, err)
	}
	return nil
}

// broadcastPoll is how often awaitBroadcast looks for a member left to
// hear the broadcast.
const broadcastPoll = 50 * time.Millisecond

// awaitBroadcast runs send, a memberlist call that blocks until its
// broadcast has gone out or timeout passes, and returns its error; or nil
// as soon as no other member is alive. A broadcast with nobody to gossip
// to never goes out, and memberlist checks for a live member only once,
// before it waits: when every node of a cluster stops at once, the last
// ones to leave would wait out the whole timeout (5 s for serve) with
// nobody left to tell. send's goroutine then returns by timeout.
func (n *Node) awaitBroadcast(timeout time.Duration, send func(time.Duration) error) error {
	done := make(chan error, 1)
	go func() { done <- send(timeout) }()
	tick := time.NewTicker(broadcastPoll)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-tick.C:
			if !n.othersAlive() {
				return nil
			}
		}
	}
}

// othersAlive reports whether memberlist knows a member other than this
// node that is neither dead nor left.
func (n *Node) othersAlive() bool {
	for _, m := range n.ml.Members() {
		if m.Name != n.cfg.Name {
			return true
		}
	}
	return false
}

// Close stops the node abruptly (memberlist shuts down without a leave
// message, so the others detect a failure unless Leave was called first).
// It closes every subscription channel and waits for the node's goroutines,
// including running handlers, so handlers must return once their ctx is
// cancelled. Close is idempotent.
func (n *Node) Close() error {
	n.closeOnce.Do(func() { n.closeErr = n.close() })
	return n.closeErr
}

func (n *Node) close() error {
	n.lifeMu.Lock()
	defer n.lifeMu.Unlock()
	n.closing.Store(true)
	n.mu.Lock()
	n.closed = true
	n.mu.Unlock()
	n.cancel()
	n.gate.close()
	n.closePools()
	n.dials.Wait() // cancelled with n.ctx: no dial of ours outlives the host
	var errs []error
	if n.ml != nil {
		errs = append(errs, n.ml.Shutdown())
	}
	if n.kad != nil {
		errs = append(errs, n.kad.Close())
	}
	if n.host != nil {
		n.host.RemoveStreamHandler(PeerProtocol)
		n.host.RemoveStreamHandler(StreamProtocol)
		errs = append(errs, n.host.Close())
	}
	n.closeSubscribers()
	n.wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("dht: close node %s: %w", n.cfg.Name, err)
	}
	return nil
}

// beginDial admits one call that may dial (host.Connect, host.NewStream)
// unless the node is closed: it returns ctx, also cancelled when the node
// closes, and the function to call when the dial returned. Close waits for
// admitted dials before it closes the host: libp2p's swarm dereferences a
// transport that its Close has removed when a dial reaches it during the
// Close (a nil pointer panic, go-libp2p#1545), which a test of this
// package hit once under -race.
func (n *Node) beginDial(ctx context.Context) (context.Context, func(), bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return ctx, func() {}, false
	}
	n.dials.Add(1)
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(n.ctx, cancel)
	return ctx, func() { stop(); cancel(); n.dials.Done() }, true
}

func (n *Node) isClosed() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.closed
}

// goTracked runs f on a goroutine that Close waits for, unless the node is
// closed (then it reports false and does not run f).
func (n *Node) goTracked(f func()) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return false
	}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		f()
	}()
	return true
}

func randomUint64() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return binary.BigEndian.Uint64(b[:])
}
