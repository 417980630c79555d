package main

// The cluster's side of serve's security: gossip (memberlist) and peer
// streams (libp2p) on an address other hosts can reach need their keys.

import (
	"fmt"
	"strings"

	"github.com/shufflenode/shufflenode/api"
	"github.com/shufflenode/shufflenode/node"
)

// checkCluster refuses to gossip on an exposed (non-loopback) address
// without a gossip key, or to serve peer streams on one without a network
// key, unless insecure (--insecure-cluster): without the gossip key anyone
// who reaches the gossip port joins the cluster, and with it can close other
// clients' shuffles, own partitions of new ones and be handed out as their
// location; without the network key anyone may open peer streams.
func checkCluster(cfg node.Config, insecure bool) error {
	if insecure {
		return nil
	}
	cl := cfg.Cluster
	if api.Exposed(cl.GossipAddr) && len(cl.GossipKey) == 0 {
		return fmt.Errorf("refusing to gossip on %s, which is not a loopback address, without --gossip-key: "+
			"any process that reaches it could join the cluster, own partitions and close shuffles; "+
			"give every node the same key file, or --insecure-cluster to run open anyway", cl.GossipAddr)
	}
	for _, ma := range cl.ListenAddrs {
		if multiaddrExposed(ma) && len(cl.NetworkKey) == 0 {
			return fmt.Errorf("refusing to serve peer streams on %s, which is not a loopback address, without --network-key: "+
				"any process that reaches it could open streams to this node; "+
				"give every node the same key file, or --insecure-cluster to run open anyway", ma)
		}
	}
	return nil
}

// warnOpenCluster logs when --insecure-cluster lets an exposed cluster run
// without its keys.
func warnOpenCluster(cfg node.Config, insecure bool) {
	if !insecure || checkCluster(cfg, false) == nil {
		return
	}
	cfg.Logger.Warn("the cluster is open to any process that reaches its gossip or peer ports (--insecure-cluster)",
		"gossip", cfg.Cluster.GossipAddr, "listen", strings.Join(cfg.Cluster.ListenAddrs, ","))
}

// multiaddrExposed reports whether a listen multiaddr (/ip4/A/tcp/P,
// /ip6/A/..., /dns4/H/...) may be reached from other hosts: any but a
// loopback IP or localhost.
func multiaddrExposed(ma string) bool {
	parts := strings.Split(strings.TrimPrefix(ma, "/"), "/")
	if len(parts) < 2 {
		return true
	}
	switch parts[0] {
	case "ip4", "ip6", "dns", "dns4", "dns6":
		return api.Exposed(parts[1])
	}
	return true
}

// checkAdmin refuses Go's profiles (--pprof) on an exposed admin address:
// the admin port has no authentication, and a profile shows the node's
// internals and costs CPU while it runs.
func checkAdmin(cfg node.Config) error {
	if cfg.AdminAddr != "" && cfg.AdminPprof && api.Exposed(cfg.AdminAddr) {
		return fmt.Errorf("refusing to serve /debug/pprof on --admin %s, which is not a loopback address: "+
			"the admin port has no authentication; bind it to 127.0.0.1 (and reach it through a tunnel) or drop --pprof", cfg.AdminAddr)
	}
	return nil
}

// warnAdmin logs when /metrics and /status are open to other hosts.
func warnAdmin(cfg node.Config) {
	if cfg.AdminAddr != "" && api.Exposed(cfg.AdminAddr) {
		cfg.Logger.Warn("the admin port (/metrics, /status) has no authentication and is not on loopback: keep it off untrusted networks",
			"admin", cfg.AdminAddr)
	}
}
