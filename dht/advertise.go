package dht

import (
	"context"
	"fmt"
	"net"
	"slices"
	"time"

	"github.com/hashicorp/memberlist"
	ma "github.com/multiformats/go-multiaddr"
)

// validateAdvertise checks Advertise, AdvertiseGossip and AdvertiseAddrs.
func (c Config) validateAdvertise() error {
	if c.Advertise != "" {
		if _, err := hostComponent(c.Advertise); err != nil {
			return fmt.Errorf("%w: Advertise %q of node %s: %v", ErrConfig, c.Advertise, c.Name, err)
		}
	}
	if c.AdvertiseGossip != "" {
		if h, _, err := splitHostPort(c.AdvertiseGossip); err != nil || h == "" {
			return fmt.Errorf("%w: AdvertiseGossip %q of node %s: want host:port", ErrConfig, c.AdvertiseGossip, c.Name)
		}
	}
	for _, s := range c.AdvertiseAddrs {
		if _, err := ma.NewMultiaddr(s); err != nil {
			return fmt.Errorf("%w: AdvertiseAddrs %q of node %s: %v", ErrConfig, s, c.Name, err)
		}
	}
	return nil
}

// hostComponent is the multiaddr of a host: /ip4/, /ip6/ or /dns/.
func hostComponent(host string) (ma.Multiaddr, error) {
	if host == "" || host == "0.0.0.0" || host == "::" {
		return nil, fmt.Errorf("not an address others can dial")
	}
	ip := net.ParseIP(host)
	switch {
	case ip == nil:
		return ma.NewMultiaddr("/dns/" + host)
	case ip.To4() != nil:
		return ma.NewMultiaddr("/ip4/" + ip.String())
	}
	return ma.NewMultiaddr("/ip6/" + ip.String())
}

// resolveAdvertise turns a DNS name in memberlist's AdvertiseAddr into an
// IP (memberlist takes only IPs).
func resolveAdvertise(ctx context.Context, mc *memberlist.Config) error {
	if mc.AdvertiseAddr == "" || net.ParseIP(mc.AdvertiseAddr) != nil {
		return nil
	}
	ips, err := net.DefaultResolver.LookupIP(ctx, "ip", mc.AdvertiseAddr)
	if err != nil || len(ips) == 0 {
		return fmt.Errorf("%w: resolving the advertised gossip host %q of node %s: %v", ErrConfig, mc.AdvertiseAddr, mc.Name, err)
	}
	mc.AdvertiseAddr = ips[0].String()
	return nil
}

// addrsFactory returns what the libp2p host advertises instead of its
// bound addresses (nil: the bound ones): AdvertiseAddrs, else the bound
// addresses with their host replaced by Advertise. Validate has checked
// both.
func (c Config) addrsFactory() func([]ma.Multiaddr) []ma.Multiaddr {
	if len(c.AdvertiseAddrs) > 0 {
		fixed := make([]ma.Multiaddr, 0, len(c.AdvertiseAddrs))
		for _, s := range c.AdvertiseAddrs {
			a, _ := ma.NewMultiaddr(s)
			fixed = append(fixed, a)
		}
		return func([]ma.Multiaddr) []ma.Multiaddr { return slices.Clone(fixed) }
	}
	if c.Advertise == "" {
		return nil
	}
	host, _ := hostComponent(c.Advertise)
	return func(bound []ma.Multiaddr) []ma.Multiaddr { return withHost(bound, host) }
}

// withHost replaces the IP or DNS component that starts each address by
// host, dropping duplicates (0.0.0.0 binds list one address per
// interface, all with the same port).
func withHost(bound []ma.Multiaddr, host ma.Multiaddr) []ma.Multiaddr {
	var out []ma.Multiaddr
	for _, a := range bound {
		first, rest := ma.SplitFirst(a)
		if first == nil || !isHostProtocol(first.Protocol().Code) {
			continue
		}
		b := ma.Join(host, rest)
		if !slices.ContainsFunc(out, b.Equal) {
			out = append(out, b)
		}
	}
	return out
}

func isHostProtocol(code int) bool {
	switch code {
	case ma.P_IP4, ma.P_IP6, ma.P_DNS, ma.P_DNS4, ma.P_DNS6:
		return true
	}
	return false
}

// rejoinLoop contacts the missing seeds (see Config.RejoinInterval) every
// interval until the node closes. It runs on a tracked goroutine.
func (n *Node) rejoinLoop() {
	t := time.NewTicker(n.cfg.RejoinInterval)
	defer t.Stop()
	for {
		select {
		case <-n.ctx.Done():
			return
		case <-t.C:
		}
		if seeds := n.missingSeeds(); len(seeds) > 0 {
			n.rejoin(seeds)
		}
	}
}

// rejoin contacts seeds and logs the outcome: at info level when a seed
// answered (the node may have been cut off), at debug level otherwise
// (it may still be).
func (n *Node) rejoin(seeds []string) {
	k, err := n.ml.Join(seeds)
	n.stats.rejoins.Add(1)
	if k > 0 {
		n.log.Info("re-joined the cluster through its seeds", "seeds", seeds, "reached", k)
		return
	}
	n.log.Debug("seeds unreachable", "seeds", seeds, "err", err)
}

// missingSeeds lists the seeds that are neither this node's gossip address
// nor a live member's.
func (n *Node) missingSeeds() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for _, s := range n.cfg.Join {
		if s != n.self.GossipAddr && !n.hasGossipAddrLocked(s) {
			out = append(out, s)
		}
	}
	return out
}

func (n *Node) hasGossipAddrLocked(addr string) bool {
	for _, e := range n.members {
		if e.member.GossipAddr == addr {
			return true
		}
	}
	return false
}
