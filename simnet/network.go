package simnet

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	"github.com/shufflenode/shufflenode/member"
	"github.com/shufflenode/shufflenode/wire"
)

// Handler serves one request frame from a peer and returns the reply
// frame's type and payload, as dht.Handler does (service.Service.Handle is
// one). req.Payload is the Handler's own copy.
type Handler func(ctx context.Context, from member.Member, req wire.Frame) (replyType wire.Type, reply []byte)

// Network is an in-memory cluster. Create it with New, add nodes with Add,
// Close it when done.
type Network struct {
	cfg   Config
	stats counters
	wg    sync.WaitGroup // delivery goroutines and subscriber pumps

	mu       sync.Mutex
	rng      *rand.Rand        // cfg.Rand, drawn from under mu
	nodes    map[string]*Node  // every node added; lost ones stay until re-added
	cut      map[link]bool     // links cut by Cut
	isolated map[string]bool   // nodes cut off from all others by Isolate
	parted   map[link]bool     // links cut by Partition (Heal tells both ends)
	records  map[string]record // the shared record store (records.go)
	closed   bool
}

// link is an unordered pair of node names, smaller first.
type link [2]string

func linkOf(a, b string) link {
	if a > b {
		a, b = b, a
	}
	return link{a, b}
}

// New returns an empty network.
func New(cfg Config) (*Network, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	return &Network{cfg: cfg, rng: cfg.Rand, nodes: map[string]*Node{}, cut: map[link]bool{}, isolated: map[string]bool{}, parted: map[link]bool{}}, nil
}

// Add joins a node named name whose requests h serves, and emits
// member.Joined to the nodes already there. A name whose node was lost may
// be added again (a restart). Its member's API address is Config.APIAddr's
// (none without one).
func (nw *Network) Add(name string, h Handler) (*Node, error) {
	nd := &Node{net: nw, self: member.Member{Name: name}, h: h, subs: map[*member.Queue]struct{}{}}
	if nw.cfg.APIAddr != nil {
		nd.self.APIAddr = nw.cfg.APIAddr(name)
	}
	nd.ctx, nd.stop = context.WithCancel(context.Background())
	nw.mu.Lock()
	defer nw.mu.Unlock()
	if nw.closed {
		nd.stop()
		return nil, fmt.Errorf("%w: add node %s", ErrClosed, name)
	}
	if old, ok := nw.nodes[name]; ok && !old.lost {
		nd.stop()
		return nil, fmt.Errorf("%w: %s", ErrExists, name)
	}
	nw.publishLocked(member.Event{Kind: member.Joined, Member: nd.self.Clone()}, name)
	nw.nodes[name] = nd
	return nd, nil
}

// Kill crashes the node named name: requests to it fail, its handlers'
// contexts are cancelled, its subscriptions close, and every other node
// gets member.Failed.
func (nw *Network) Kill(name string) error { return nw.lose(name, member.Failed) }

// Leave is Kill with a graceful exit: the others get member.Left.
func (nw *Network) Leave(name string) error { return nw.lose(name, member.Left) }

// lose takes node name out of the cluster and tells the others kind.
func (nw *Network) lose(name string, kind member.EventKind) error {
	nw.mu.Lock()
	nd, ok := nw.nodes[name]
	if !ok || nd.lost {
		nw.mu.Unlock()
		return fmt.Errorf("%w: %s (%s)", ErrUnknownMember, name, kind)
	}
	nd.lost = true
	subs := nd.subs
	nd.subs = nil
	nw.publishLocked(member.Event{Kind: kind, Member: nd.self.Clone()}, name)
	nw.mu.Unlock()
	nd.stop()
	stopAll(subs)
	return nil
}

// publishLocked queues e for the subscribers of every live node but
// except; nw.mu is held. It never blocks.
func (nw *Network) publishLocked(e member.Event, except string) {
	for name, nd := range nw.nodes {
		if name == except || nd.lost {
			continue
		}
		for s := range nd.subs {
			s.Push(e)
		}
	}
}

// Cut breaks the link between nodes a and b, both ways: requests between
// them fail with ErrTransport until Heal. No event is emitted.
func (nw *Network) Cut(a, b string) {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	nw.cut[linkOf(a, b)] = true
}

// Isolate cuts node name off from every other node (self requests still
// work) until Heal.
func (nw *Network) Isolate(name string) {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	nw.isolated[name] = true
}

// Partition splits the nodes named in sides into groups that cannot reach
// one another, as Cut on every link between two sides, and then does what
// failure detection does after its delay: each node gets member.Failed for
// every node of the other sides. Nodes in no side keep every link. Heal
// ends it.
func (nw *Network) Partition(sides ...[]string) {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	for i, side := range sides {
		for _, other := range sides[i+1:] {
			for _, a := range side {
				nw.partLocked(a, other)
			}
		}
	}
}

// partLocked cuts a off from every node of others, and tells each end that
// the other failed; nw.mu is held.
func (nw *Network) partLocked(a string, others []string) {
	for _, b := range others {
		nw.cut[linkOf(a, b)] = true
		nw.parted[linkOf(a, b)] = true
		nw.tellLocked(a, member.Failed, b)
		nw.tellLocked(b, member.Failed, a)
	}
}

// Heal restores every link that Cut, Isolate or Partition broke; the two
// ends of each link Partition broke get member.Joined for each other, as
// gossip tells them when a partition heals.
func (nw *Network) Heal() {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	clear(nw.cut)
	clear(nw.isolated)
	for l := range nw.parted {
		nw.tellLocked(l[0], member.Joined, l[1])
		nw.tellLocked(l[1], member.Joined, l[0])
	}
	clear(nw.parted)
}

// tellLocked queues an event of kind about node about for the subscribers
// of node to, if both are live; nw.mu is held.
func (nw *Network) tellLocked(to string, kind member.EventKind, about string) {
	dst, ok := nw.nodes[to]
	of, known := nw.nodes[about]
	if !ok || !known || dst.lost || of.lost {
		return
	}
	for s := range dst.subs {
		s.Push(member.Event{Kind: kind, Member: of.self.Clone()})
	}
}

// CutOff is Partition of node name from every other live node: its links
// are cut and both sides are told what failure detection tells them once
// it gives up on a cut (every other node gets member.Failed for name, and
// name one for each of them). The node stays a member (Members lists it):
// a cut is not a crash, the node keeps running. Rejoin undoes it.
func (nw *Network) CutOff(name string) error {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	others, err := nw.othersLocked(name)
	if err != nil {
		return err
	}
	nw.partLocked(name, others)
	return nil
}

// Rejoin mends the links of node name that a CutOff or Partition broke, as
// Heal does for that node alone: both ends of each get member.Joined for
// the other, as when a cut-off node re-joins.
func (nw *Network) Rejoin(name string) error {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	others, err := nw.othersLocked(name)
	if err != nil {
		return err
	}
	for _, o := range others {
		if l := linkOf(name, o); nw.parted[l] {
			delete(nw.parted, l)
			delete(nw.cut, l)
			nw.tellLocked(o, member.Joined, name)
			nw.tellLocked(name, member.Joined, o)
		}
	}
	return nil
}

// othersLocked returns the live nodes other than name, sorted, or
// ErrUnknownMember if name is not a live node; nw.mu is held.
func (nw *Network) othersLocked(name string) ([]string, error) {
	if nd, ok := nw.nodes[name]; !ok || nd.lost {
		return nil, fmt.Errorf("%w: %s (partition)", ErrUnknownMember, name)
	}
	var out []string
	for _, o := range slices.Sorted(maps.Keys(nw.nodes)) {
		if o != name && !nw.nodes[o].lost {
			out = append(out, o)
		}
	}
	return out, nil
}

// members lists the live nodes, sorted by name.
func (nw *Network) members() []member.Member {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	out := make([]member.Member, 0, len(nw.nodes))
	for _, nd := range nw.nodes {
		if !nd.lost {
			out = append(out, nd.self.Clone())
		}
	}
	slices.SortFunc(out, func(a, b member.Member) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Close stops every node (their handlers' contexts are cancelled, their
// subscriptions close) and waits for the goroutines the Network started.
// Later requests fail with ErrClosed. Idempotent.
func (nw *Network) Close() error {
	nw.mu.Lock()
	nw.closed = true
	for _, nd := range nw.nodes {
		nd.stop()
		stopAll(nd.subs)
		nd.subs = nil
	}
	nw.mu.Unlock()
	nw.wg.Wait()
	return nil
}

// spawn runs fn on a goroutine Close waits for; false if closed.
func (nw *Network) spawn(fn func()) bool {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	if nw.closed {
		return false
	}
	nw.wg.Go(fn)
	return true
}
