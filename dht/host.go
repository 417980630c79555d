package dht

import (
	"fmt"
	"time"

	"github.com/libp2p/go-libp2p"
	kaddht "github.com/libp2p/go-libp2p-kad-dht"
	record "github.com/libp2p/go-libp2p-record"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/pnet"
	rcmgr "github.com/libp2p/go-libp2p/p2p/host/resource-manager"
	"github.com/libp2p/go-libp2p/p2p/muxer/yamux"
	"github.com/libp2p/go-libp2p/p2p/net/connmgr"
	libp2ptls "github.com/libp2p/go-libp2p/p2p/security/tls"
	"github.com/libp2p/go-libp2p/p2p/transport/tcp"
)

// Protocol names. They are part of the wire contract between nodes.
const (
	// PeerProtocol carries request/reply frames between nodes.
	PeerProtocol = "/shufflenode/peer/1"
	// dhtPrefix is kad-dht's private protocol prefix.
	dhtPrefix = "/shufflenode"
	// recordNamespace is the kad-dht key namespace of PutRecord/GetRecord.
	recordNamespace = "shufflenode"
	// protectTag marks members' peers in the connection manager.
	protectTag = "shufflenode-member"
)

// Resource-manager limits beyond Config's: connections per peer (a member
// needs one; simultaneous dials and restarts make a few), and connections
// and streams in the transient scope (handshakes not yet authenticated,
// streams whose protocol is being negotiated).
const (
	peerConns        = 8
	transientConns   = 256
	transientStreams = 4096
)

// newHost starts a libp2p host for a private cluster: TCP only, TLS 1.3
// (coalescingTLS: libp2p's, with fewer socket writes), yamux, no relay, no AutoNAT probing, no metrics; the resource manager
// limits connections and streams (resourceLimits); with a network key, a
// private network (PSK); with a gate, only members connect.
func newHost(cfg Config, key crypto.PrivKey, g *gate) (host.Host, error) {
	rm, err := rcmgr.NewResourceManager(rcmgr.NewFixedLimiter(resourceLimits(cfg)), rcmgr.WithMetricsDisabled())
	if err != nil {
		return nil, fmt.Errorf("dht: node %s: resource manager: %w", cfg.Name, err)
	}
	cm, err := connmgr.NewConnManager(256, 1024, connmgr.WithGracePeriod(time.Minute))
	if err != nil {
		return nil, fmt.Errorf("dht: node %s: connection manager: %w", cfg.Name, err)
	}
	opts := []libp2p.Option{
		libp2p.Identity(key),
		libp2p.ListenAddrStrings(cfg.ListenAddrs...),
		// No SO_REUSEPORT: dialling from the listen port lets two nodes that
		// redial each other at once (after a dropped connection) meet in one
		// TCP simultaneous open, where both sides play the TLS client and
		// both dials fail ("received unexpected handshake message of type
		// *tls.clientHelloMsg"). Ephemeral source ports cannot collide; a
		// cluster needs no NAT hole punching, which is what reuse is for.
		libp2p.Transport(tcp.NewTCPTransport, tcp.DisableReuseport()),
		libp2p.Security(libp2ptls.ID, newCoalescingTLS),
		libp2p.Muxer(yamux.ID, yamux.DefaultTransport),
		libp2p.ResourceManager(rm),
		libp2p.ConnectionManager(cm),
		libp2p.DisableRelay(),
		libp2p.ForceReachabilityPublic(),
		libp2p.DisableMetrics(),
	}
	if g != nil {
		opts = append(opts, libp2p.ConnectionGater(g))
	}
	if f := cfg.addrsFactory(); f != nil {
		opts = append(opts, libp2p.AddrsFactory(f))
	}
	if len(cfg.NetworkKey) > 0 {
		opts = append(opts, libp2p.PrivateNetwork(pnet.PSK(cfg.NetworkKey)))
	}
	h, err := libp2p.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("dht: node %s: libp2p host: %w", cfg.Name, err)
	}
	return h, nil
}

// resourceLimits counts what a peer may hold: cfg.MaxConns connections in
// all, peerConns per peer, cfg.MaxPeerStreams streams per peer each way,
// and bounded handshakes in progress. Memory is not limited here: the
// payloads a node reads are bounded by MaxInboundBytes and the service's
// budget, and yamux's windows by the stream counts.
func resourceLimits(cfg Config) rcmgr.ConcreteLimitConfig {
	conns, streams := rcmgr.LimitVal(cfg.MaxConns), rcmgr.LimitVal(cfg.MaxPeerStreams)
	return rcmgr.PartialLimitConfig{
		System: rcmgr.ResourceLimits{Conns: conns, ConnsInbound: conns, ConnsOutbound: conns, FD: conns},
		Transient: rcmgr.ResourceLimits{Conns: transientConns, ConnsInbound: transientConns, ConnsOutbound: transientConns,
			FD: transientConns, Streams: transientStreams, StreamsInbound: transientStreams, StreamsOutbound: transientStreams},
		PeerDefault: rcmgr.ResourceLimits{Conns: peerConns, ConnsInbound: peerConns, ConnsOutbound: peerConns,
			Streams: 2 * streams, StreamsInbound: streams, StreamsOutbound: streams},
	}.Build(rcmgr.InfiniteLimits)
}

// newKad starts kad-dht in server mode under the private prefix, with no
// bootstrap peers (members are connected as memberlist reports them), no
// provider records, and our record validator rv.
func newKad(h host.Host, rv recordValidator) (*kaddht.IpfsDHT, error) {
	return kaddht.New(h,
		kaddht.Mode(kaddht.ModeServer),
		kaddht.ProtocolPrefix(dhtPrefix),
		kaddht.Validator(record.NamespacedValidator{recordNamespace: rv}),
		kaddht.DisableProviders(),
	)
}
