package dht_test

import (
	"context"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p"
	kaddht "github.com/libp2p/go-libp2p-kad-dht"
	record "github.com/libp2p/go-libp2p-record"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/libp2p/go-libp2p/p2p/muxer/yamux"
	libp2ptls "github.com/libp2p/go-libp2p/p2p/security/tls"
	"github.com/libp2p/go-libp2p/p2p/transport/tcp"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/shufflenode/shufflenode/dht"
	"github.com/shufflenode/shufflenode/dht/dhttest"
	"github.com/shufflenode/shufflenode/wire"
)

// anyValidator accepts every record: the outsider's kad-dht would store
// whatever it is sent.
type anyValidator struct{}

func (anyValidator) Validate(string, []byte) error        { return nil }
func (anyValidator) Select(string, [][]byte) (int, error) { return 0, nil }

// newOutsider starts a libp2p host with the cluster's transport, security
// and muxer (so only the gate stands in its way), and a kad-dht under the
// cluster's prefix, that knows the addresses of target.
func newOutsider(t *testing.T, target dht.Member) (host.Host, *kaddht.IpfsDHT, peer.AddrInfo) {
	t.Helper()
	h, err := libp2p.New(libp2p.ListenAddrStrings("/ip4/127.0.0.1/tcp/0"), libp2p.Transport(tcp.NewTCPTransport),
		libp2p.Security(libp2ptls.ID, libp2ptls.New), libp2p.Muxer(yamux.ID, yamux.DefaultTransport),
		libp2p.DisableRelay(), libp2p.ForceReachabilityPublic(), libp2p.DisableMetrics())
	if err != nil {
		t.Fatal(err)
	}
	kad, err := kaddht.New(h, kaddht.Mode(kaddht.ModeServer), kaddht.ProtocolPrefix("/shufflenode"),
		kaddht.Validator(record.NamespacedValidator{"shufflenode": anyValidator{}}), kaddht.DisableProviders())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kad.Close(); h.Close() })
	id, err := peer.Decode(target.PeerID)
	if err != nil {
		t.Fatal(err)
	}
	info := peer.AddrInfo{ID: id}
	for _, a := range target.Addrs {
		info.Addrs = append(info.Addrs, ma.StringCast(a))
	}
	return h, kad, info
}

// TestNonMemberIsRefused: a libp2p host outside the member list (same
// transport, no private-network key in either cluster) cannot open a
// request or kad-dht stream to a member or store a record; members still
// talk to each other.
func TestNonMemberIsRefused(t *testing.T) {
	nodes := dhttest.StartCluster(t, 2, nil, ackHandler)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := nodes[0].Request(ctx, "node-1", wire.TypeControl, nil); err != nil {
		t.Fatalf("request between members: %v", err)
	}
	out, kad, info := newOutsider(t, nodes[1].Self())
	out.Peerstore().AddAddrs(info.ID, info.Addrs, time.Hour)
	_ = out.Connect(ctx, info) // the dialer's handshake may finish before the member's gate closes it
	for _, p := range []protocol.ID{dht.PeerProtocol, "/shufflenode/kad/1.0.0"} {
		if s, err := out.NewStream(ctx, info.ID, p); err == nil {
			s.Reset()
			t.Fatalf("the outsider opened a %s stream", p)
		}
	}
	if err := kad.PutValue(ctx, "/shufflenode/planted", versioned("outsider")); err == nil {
		t.Fatal("the outsider's PutValue succeeded")
	}
	if v, err := nodes[0].GetRecord(ctx, "planted"); !errors.Is(err, dht.ErrNotFound) {
		t.Fatalf("members find the outsider's record: %q, %v", v, err)
	}
	if got := nodes[1].Stats().RequestsServed; got != 1 {
		t.Fatalf("node-1 served %d requests, want 1 (the member's)", got)
	}
}

// versioned prefixes a record value with the version our records carry.
func versioned(s string) []byte {
	return append(binary.BigEndian.AppendUint64(nil, uint64(time.Now().UnixNano())), s...)
}
