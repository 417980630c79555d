package dht

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"
)

// pollInterval is how often StartNodes checks whether the cluster formed.
const pollInterval = 20 * time.Millisecond

// Configs derives n node configs from base for one process running n nodes
// (tests, the demo command): names base.Name+"-<i>" ("node-<i>" if
// base.Name is empty), data directories base.DataDir/<name> (ephemeral
// identities if base.DataDir is empty), and a fresh Join slice each. Every
// other field is shared.
func Configs(n int, base Config) []Config {
	prefix := base.Name
	if prefix == "" {
		prefix = "node"
	}
	out := make([]Config, n)
	for i := range out {
		c := base
		c.Name = fmt.Sprintf("%s-%d", prefix, i)
		if base.DataDir != "" {
			c.DataDir = filepath.Join(base.DataDir, c.Name)
		}
		c.Join = append([]string(nil), base.Join...)
		out[i] = c
	}
	return out
}

// Start runs n nodes in this process from base (see Configs) and returns
// them once the cluster has formed (see StartNodes).
func Start(ctx context.Context, n int, base Config, h func(i int) Handler) ([]*Node, error) {
	return StartNodes(ctx, Configs(n, base), h)
}

// StartNodes starts one node per config (node i serves with h(i)); nodes
// after the first also join the first one's gossip address. It returns
// when every node lists all len(cfgs) members and has every other node in
// its kad-dht routing table, so Request, PutRecord and GetRecord work at
// once. On error (or ctx's end) it closes the nodes it started.
func StartNodes(ctx context.Context, cfgs []Config, h func(i int) Handler) ([]*Node, error) {
	nodes := make([]*Node, 0, len(cfgs))
	fail := func(err error) ([]*Node, error) {
		for _, nd := range nodes {
			err = errors.Join(err, nd.Close())
		}
		return nil, err
	}
	for i, c := range cfgs {
		if i > 0 {
			c.Join = append(c.Join, nodes[0].Self().GossipAddr)
		}
		nd, err := New(ctx, c, h(i))
		if err != nil {
			return fail(err)
		}
		nodes = append(nodes, nd)
	}
	if err := WaitFormed(ctx, nodes); err != nil {
		return fail(err)
	}
	return nodes, nil
}

// WaitFormed polls until every node lists all len(nodes) members and has
// the others in its kad-dht routing table, or ctx ends.
func WaitFormed(ctx context.Context, nodes []*Node) error {
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for !formed(nodes) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("dht: cluster of %d nodes did not form: %w", len(nodes), ctx.Err())
		case <-t.C:
		}
	}
	return nil
}

// formed reports whether every node sees at least the others (it may see
// more: a node started alone that joined a running cluster sees all of it).
func formed(nodes []*Node) bool {
	for _, nd := range nodes {
		s := nd.Stats()
		if s.Members < len(nodes) || s.RoutingTablePeers < len(nodes)-1 {
			return false
		}
	}
	return true
}
