package dht

import (
	"context"
	"slices"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/peerstore"
	ma "github.com/multiformats/go-multiaddr"
	manet "github.com/multiformats/go-multiaddr/net"
)

// memberEntry is what the node knows about another live member.
type memberEntry struct {
	member  Member
	peer    peer.ID
	boot    uint64
	leaving bool           // the member announced a graceful leave
	addrs   []ma.Multiaddr // as advertised, in the peerstore permanently
}

// metaDelegate gives memberlist this node's metadata. memberlist calls it
// on its own goroutines; it must not block.
type metaDelegate Node

// NodeMeta returns the encoded metadata (peer ID, boot nonce, client-API
// address and as many libp2p addresses as fit in limit bytes).
func (d *metaDelegate) NodeMeta(limit int) []byte {
	n := (*Node)(d)
	m := meta{
		Boot: n.boot, Leaving: n.leaving.Load(), PeerID: n.host.ID(),
		APIAddr: n.cfg.APIAddr, Addrs: advertised(n.host.Addrs()),
	}
	b, err := m.encode(limit)
	if err != nil {
		n.log.Error("cannot encode member metadata", "err", err)
	}
	return b
}

// NotifyMsg ignores user messages (the node sends none).
func (d *metaDelegate) NotifyMsg([]byte) {}

// GetBroadcasts returns no user broadcasts.
func (d *metaDelegate) GetBroadcasts(int, int) [][]byte { return nil }

// LocalState returns no user state for push/pull.
func (d *metaDelegate) LocalState(bool) []byte { return nil }

// MergeRemoteState ignores remote user state.
func (d *metaDelegate) MergeRemoteState([]byte, bool) {}

// advertised orders addresses so that non-loopback ones come first (they
// are kept when the metadata limit forces addresses to be dropped).
func advertised(addrs []ma.Multiaddr) []ma.Multiaddr {
	out := slices.Clone(addrs)
	slices.SortStableFunc(out, func(a, b ma.Multiaddr) int {
		return boolInt(manet.IsIPLoopback(a)) - boolInt(manet.IsIPLoopback(b))
	})
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// eventDelegate receives memberlist's join/leave/update notifications on
// memberlist's goroutines. It only updates maps, the peerstore and the
// subscriber queues, and starts dials on tracked goroutines: it never
// blocks.
type eventDelegate Node

// NotifyJoin records a new member.
func (d *eventDelegate) NotifyJoin(node *memberlist.Node) { (*Node)(d).upsertMember(node) }

// NotifyUpdate records a member's new metadata.
func (d *eventDelegate) NotifyUpdate(node *memberlist.Node) { (*Node)(d).upsertMember(node) }

// NotifyLeave drops a member that left (MemberLeave: it announced leaving
// in its metadata first) or died (MemberFail). memberlist's node.State is
// not reliable here, hence the metadata flag.
func (d *eventDelegate) NotifyLeave(node *memberlist.Node) {
	n := (*Node)(d)
	n.mu.Lock()
	defer n.mu.Unlock()
	e, ok := n.members[node.Name]
	if !ok || n.closed {
		return
	}
	kind := MemberFail
	if e.leaving {
		kind = MemberLeave
	}
	n.dropLocked(e, kind)
}

// upsertMember adds or refreshes a member from its memberlist node. The
// peer's addresses enter the peerstore before the member is listed, so a
// Request can follow Members at once. A member whose boot nonce or peer ID
// changed restarted: it is reported as failed, then as joined.
func (n *Node) upsertMember(node *memberlist.Node) {
	if node.Name == n.cfg.Name {
		return
	}
	m, err := decodeMeta(node.Meta)
	if err != nil {
		n.log.Warn("ignoring member with bad metadata", "peer", node.Name, "err", err)
		return
	}
	e := memberEntry{peer: m.PeerID, boot: m.Boot, leaving: m.Leaving, addrs: m.Addrs, member: Member{
		Name: node.Name, PeerID: m.PeerID.String(), Addrs: addrStrings(m.Addrs),
		APIAddr: m.APIAddr, GossipAddr: node.Address(),
	}}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return
	}
	old, ok := n.members[node.Name]
	same := ok && old.boot == e.boot && old.peer == e.peer
	if ok && !same {
		n.dropLocked(old, MemberFail)
	}
	n.setAddrs(old, e)
	if same {
		n.members[node.Name] = e
		return
	}
	n.addLocked(e)
}

// setAddrs puts e's addresses in the peerstore and expires those of old
// (the same member's previous metadata, if any) that e no longer has.
func (n *Node) setAddrs(old, e memberEntry) {
	ps := n.host.Peerstore()
	ps.AddAddrs(e.peer, e.addrs, peerstore.PermanentAddrTTL)
	var stale []ma.Multiaddr
	for _, a := range old.addrs {
		if old.peer != e.peer || !slices.ContainsFunc(e.addrs, a.Equal) {
			stale = append(stale, a)
		}
	}
	if len(stale) > 0 {
		ps.SetAddrs(old.peer, stale, 0)
	}
}

// addLocked lists e, protects its connections, tells subscribers and dials
// it in the background (kad-dht adds connected peers to its routing table).
func (n *Node) addLocked(e memberEntry) {
	n.members[e.member.Name] = e
	n.byPeer[e.peer] = e.member.Name
	n.signers[e.peer] = struct{}{}
	n.gate.admit(e.peer)
	n.host.ConnManager().Protect(e.peer, protectTag)
	n.publishLocked(Event{Kind: MemberJoin, Member: e.member.Clone()})
	n.log.Info("member joined", "peer", e.member.Name, "peer_id", e.member.PeerID)
	info := peer.AddrInfo{ID: e.peer, Addrs: e.addrs}
	n.wg.Add(1)
	go func() {
		defer n.wg.Done()
		n.dial(info, e.member.Name)
	}()
}

// dropLocked unlists e, removes its peer from kad-dht's routing table, and
// lets its addresses expire from the peerstore.
func (n *Node) dropLocked(e memberEntry, kind EventKind) {
	delete(n.members, e.member.Name)
	if n.byPeer[e.peer] == e.member.Name {
		delete(n.byPeer, e.peer)
	}
	n.gate.revoke(e.peer)
	n.host.Peerstore().UpdateAddrs(e.peer, peerstore.PermanentAddrTTL, peerstore.RecentlyConnectedAddrTTL)
	n.host.ConnManager().Unprotect(e.peer, protectTag)
	n.kad.RoutingTable().RemovePeer(e.peer)
	n.dropPoolLocked(e.member.Name)
	n.publishLocked(Event{Kind: kind, Member: e.member.Clone()})
	n.log.Info("member gone", "peer", e.member.Name, "event", kind.String())
}

// dialTries bounds the attempts to connect to a new member.
const dialTries = 8

// dial connects to a new member so that identify and kad-dht learn it. A
// failed dial (the member may not listen yet while a cluster forms) is
// tried again with backoff while the member is listed, past libp2p's dial
// backoff: memberlist says the member is alive.
func (n *Node) dial(info peer.AddrInfo, name string) {
	for try := range dialTries {
		ctx, done, ok := n.beginDial(network.WithForceDirectDial(n.ctx, "cluster member"))
		if !ok {
			return
		}
		ctx, cancel := context.WithTimeout(ctx, n.cfg.RequestTimeout)
		err := n.host.Connect(ctx, info)
		cancel()
		done()
		if err == nil || n.ctx.Err() != nil {
			return
		}
		if e, ok := n.lookup(name); !ok || e.peer != info.ID {
			return // gone meanwhile
		}
		n.log.Warn("cannot connect to member", "peer", name, "try", try+1, "err", err)
		select {
		case <-time.After(min(50*time.Millisecond<<try, 5*time.Second)):
		case <-n.ctx.Done():
			return
		}
	}
}

// memberByPeer returns the member with peer ID p, or a Member with only
// PeerID set if p is not a known member.
func (n *Node) memberByPeer(p peer.ID) Member {
	n.mu.Lock()
	defer n.mu.Unlock()
	if p == n.host.ID() {
		return n.self.Clone()
	}
	if name, ok := n.byPeer[p]; ok {
		return n.members[name].member.Clone()
	}
	return Member{PeerID: p.String()}
}

// lookup returns the live member called name.
func (n *Node) lookup(name string) (memberEntry, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	e, ok := n.members[name]
	return e, ok
}

func addrStrings(addrs []ma.Multiaddr) []string {
	out := make([]string, len(addrs))
	for i, a := range addrs {
		out[i] = a.String()
	}
	return out
}
