package dht

import (
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/hashicorp/memberlist"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/shufflenode/shufflenode/wire"
)

// Timer profiles for Config.Profile.
const (
	// ProfileLAN uses memberlist's LAN timers (crash detected in ~5-10 s).
	ProfileLAN = "lan"
	// ProfileLocal uses memberlist's loopback timers with RetransmitMult 4
	// (fast convergence of many nodes joining at once; crash detected in ~5 s).
	ProfileLocal = "local"
)

// maxNameLen bounds Config.Name and Config.APIAddr so metadata fits in
// memberlist's 512 bytes.
const maxNameLen = 128

// Config configures a Node. The zero value of every field except Name means
// "use the default" (see DefaultConfig).
type Config struct {
	// Name is the node's unique member name (memberlist node name). Required.
	Name string
	// DataDir holds the identity key (DataDir/identity.key, created on first
	// start with mode 0600). Empty means an ephemeral identity: a new peer ID
	// on every start.
	DataDir string
	// ListenAddrs are libp2p multiaddrs (TCP). Default ["/ip4/127.0.0.1/tcp/0"].
	ListenAddrs []string
	// GossipAddr is memberlist's bind address, host:port. Default
	// "127.0.0.1:0" (port 0: the kernel picks one; TCP and UDP share it).
	GossipAddr string
	// Join lists memberlist seeds (host:port). Empty starts a new cluster.
	Join []string
	// RejoinInterval is how often a node with seeds contacts again those
	// of its seeds that are not live members' gossip addresses (a seed
	// given as a DNS name always counts as missing), so a node cut off
	// for longer than failure detection, or a seed that restarted, finds
	// the cluster again. Default 30 s; negative: never.
	RejoinInterval time.Duration
	// JoinWait is how long New keeps trying its seeds while none answers
	// (nodes started together race their seeds), waiting 0.5 s between
	// tries, doubling up to 15 s. Default 0: one try, then ErrJoin;
	// negative: until New's ctx ends.
	JoinWait time.Duration
	// Advertise is the host (IP address or DNS name) the other members
	// should use to reach this node, when it differs from the bind
	// addresses (0.0.0.0, NAT, pods): memberlist advertises it (resolved
	// to an IP at start) with the bound gossip port, and the libp2p
	// addresses advertised are the bound ones with their IP replaced by
	// it. Empty: the bound addresses (memberlist picks a private IP for
	// 0.0.0.0; libp2p lists every interface's).
	Advertise string
	// AdvertiseGossip, host:port, overrides the gossip address advertised
	// (a port-mapping NAT). With a GossipAddr port of 0 the bound port is
	// advertised whatever the port here.
	AdvertiseGossip string
	// AdvertiseAddrs, libp2p multiaddrs, override the libp2p addresses
	// advertised.
	AdvertiseAddrs []string
	// NetworkKey is an optional libp2p private-network key (32 bytes). Nodes
	// with a different key (or none) cannot connect.
	NetworkKey []byte
	// GossipKey is an optional memberlist SecretKey (16, 24 or 32 bytes,
	// AES-GCM). A node with another key cannot join.
	GossipKey []byte
	// APIAddr is the node's client-API (Flight) address, advertised to
	// the other members. May be empty.
	APIAddr string
	// Profile selects memberlist timers: ProfileLAN (default) or ProfileLocal.
	Profile string
	// ProbeInterval, ProbeTimeout and SuspicionMult override the profile's
	// failure-detector timers when non-zero.
	ProbeInterval time.Duration
	// ProbeTimeout: see ProbeInterval.
	ProbeTimeout time.Duration
	// SuspicionMult: see ProbeInterval.
	SuspicionMult int
	// MaxPayload is the largest frame payload a node reads from a peer.
	// Default wire.DefaultMaxPayload.
	MaxPayload int
	// MaxInboundBytes bounds the payload bytes of the peer requests this
	// node reads and handles at once, whatever the number of peers: a
	// request over the bound waits before its payload is read, and after
	// RequestTimeout/4 its payload is skipped and it gets a Busy reply (the
	// sender backs off and sends it again). A single request larger than
	// the bound is read alone; requests of up to 64 KiB (control messages)
	// are not counted. Default 256 MiB.
	MaxInboundBytes int64
	// MaxConns bounds the node's libp2p connections, inbound and outbound
	// (the resource manager's system scope; each holds a file descriptor).
	// A member keeps one or two to every other member. Default 1024.
	MaxConns int
	// MaxPeerStreams bounds the streams open with one peer at once, each
	// way (requests, reads and kad-dht's). Default 4096.
	MaxPeerStreams int
	// RecordRules are strict rules for record keys by prefix (see
	// RecordRule): every node of a cluster must have the same.
	RecordRules []RecordRule
	// RequestTimeout bounds a Request whose context has no deadline, and
	// each background dial to a new member. Default 60 s.
	RequestTimeout time.Duration
	// Logger receives this node's logs and memberlist's (key "peer" names
	// the remote node). Default slog.Default(). libp2p's and kad-dht's own
	// loggers are process-wide: see SetLibp2pLogHandler.
	Logger *slog.Logger
}

// DefaultConfig returns a Config with every default filled in except Name,
// which the caller must set.
func DefaultConfig() Config {
	return Config{
		ListenAddrs:     []string{"/ip4/127.0.0.1/tcp/0"},
		GossipAddr:      "127.0.0.1:0",
		Profile:         ProfileLAN,
		MaxPayload:      wire.DefaultMaxPayload,
		MaxInboundBytes: 256 << 20,
		MaxConns:        1024,
		MaxPeerStreams:  4096,
		RequestTimeout:  60 * time.Second,
		RejoinInterval:  30 * time.Second,
	}
}

// withDefaults returns c with every zero field replaced by its default.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if len(c.ListenAddrs) == 0 {
		c.ListenAddrs = d.ListenAddrs
	}
	if c.GossipAddr == "" {
		c.GossipAddr = d.GossipAddr
	}
	if c.Profile == "" {
		c.Profile = d.Profile
	}
	if c.MaxPayload == 0 {
		c.MaxPayload = d.MaxPayload
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = d.RequestTimeout
	}
	if c.MaxInboundBytes == 0 {
		c.MaxInboundBytes = d.MaxInboundBytes
	}
	if c.MaxConns == 0 {
		c.MaxConns = d.MaxConns
	}
	if c.MaxPeerStreams == 0 {
		c.MaxPeerStreams = d.MaxPeerStreams
	}
	if c.RejoinInterval == 0 {
		c.RejoinInterval = d.RejoinInterval
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Validate reports the first invalid field (after defaults are applied) as
// an error matching ErrConfig.
func (c Config) Validate() error {
	c = c.withDefaults()
	checks := []func() error{c.validateNames, c.validateAddrs, c.validateKeys, c.validateLimits, c.validateRules}
	for _, check := range checks {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

func (c Config) validateRules() error {
	for _, r := range c.RecordRules {
		if r.Prefix == "" || r.Rank == nil {
			return fmt.Errorf("%w: record rule of node %s: prefix %q, rank set %v", ErrConfig, c.Name, r.Prefix, r.Rank != nil)
		}
	}
	return nil
}

func (c Config) validateNames() error {
	if c.Name == "" || len(c.Name) > maxNameLen {
		return fmt.Errorf("%w: Name must have 1..%d bytes, got %d", ErrConfig, maxNameLen, len(c.Name))
	}
	if len(c.APIAddr) > maxNameLen {
		return fmt.Errorf("%w: APIAddr of node %s is longer than %d bytes", ErrConfig, c.Name, maxNameLen)
	}
	if c.Profile != ProfileLAN && c.Profile != ProfileLocal {
		return fmt.Errorf("%w: Profile %q of node %s (want %q or %q)", ErrConfig, c.Profile, c.Name, ProfileLAN, ProfileLocal)
	}
	return nil
}

func (c Config) validateAddrs() error {
	for _, s := range c.ListenAddrs {
		if _, err := ma.NewMultiaddr(s); err != nil {
			return fmt.Errorf("%w: ListenAddrs %q of node %s: %v", ErrConfig, s, c.Name, err)
		}
	}
	if _, _, err := splitHostPort(c.GossipAddr); err != nil {
		return fmt.Errorf("%w: GossipAddr of node %s: %v", ErrConfig, c.Name, err)
	}
	return c.validateAdvertise()
}

func (c Config) validateKeys() error {
	if n := len(c.NetworkKey); n != 0 && n != 32 {
		return fmt.Errorf("%w: NetworkKey of node %s has %d bytes, want 32", ErrConfig, c.Name, n)
	}
	switch len(c.GossipKey) {
	case 0, 16, 24, 32:
		return nil
	}
	return fmt.Errorf("%w: GossipKey of node %s has %d bytes, want 16, 24 or 32", ErrConfig, c.Name, len(c.GossipKey))
}

func (c Config) validateLimits() error {
	if c.MaxPayload < 0 || c.MaxInboundBytes < 0 || c.RequestTimeout < 0 || c.ProbeInterval < 0 || c.ProbeTimeout < 0 || c.SuspicionMult < 0 {
		return fmt.Errorf("%w: negative MaxPayload, MaxInboundBytes, RequestTimeout or timer of node %s", ErrConfig, c.Name)
	}
	if c.MaxConns < 0 || c.MaxPeerStreams < 0 {
		return fmt.Errorf("%w: negative MaxConns or MaxPeerStreams of node %s", ErrConfig, c.Name)
	}
	if mc := c.memberlistConfig(); mc.ProbeTimeout >= mc.ProbeInterval {
		return fmt.Errorf("%w: node %s: probe timeout %v is not shorter than the probe interval %v (profile %s)",
			ErrConfig, c.Name, mc.ProbeTimeout, mc.ProbeInterval, c.Profile)
	}
	return nil
}

// splitHostPort parses "host:port" with a numeric port.
func splitHostPort(addr string) (string, int, error) {
	host, ps, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.ParseUint(ps, 10, 16)
	if err != nil {
		return "", 0, fmt.Errorf("port %q: %w", ps, err)
	}
	return host, int(port), nil
}

// memberlistConfig builds memberlist's config from c (defaults applied).
func (c Config) memberlistConfig() *memberlist.Config {
	mc := memberlist.DefaultLANConfig()
	if c.Profile == ProfileLocal {
		mc = memberlist.DefaultLocalConfig()
		mc.RetransmitMult = 4
		mc.DeadNodeReclaimTime = time.Second
	}
	mc.Name = c.Name
	mc.BindAddr, mc.BindPort, _ = splitHostPort(c.GossipAddr)
	mc.AdvertiseAddr, mc.AdvertisePort = c.Advertise, mc.BindPort
	if c.AdvertiseGossip != "" {
		mc.AdvertiseAddr, mc.AdvertisePort, _ = splitHostPort(c.AdvertiseGossip)
	}
	mc.SecretKey = c.GossipKey
	if c.ProbeInterval > 0 {
		mc.ProbeInterval = c.ProbeInterval
	}
	if c.ProbeTimeout > 0 {
		mc.ProbeTimeout = c.ProbeTimeout
	}
	if c.SuspicionMult > 0 {
		mc.SuspicionMult = c.SuspicionMult
	}
	return mc
}
