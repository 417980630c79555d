package dhttest

import (
	"context"
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/dht"
)

// FormTimeout bounds how long StartCluster waits for the cluster to form.
const FormTimeout = 60 * time.Second

// StartCluster starts n nodes named "node-0".."node-<n-1>", lets mutate
// adjust each config (mutate may be nil), serves node i with h(i), and
// returns once every node sees all n members (and has the others in its
// kad-dht routing table). It fails tb if the cluster does not form.
func StartCluster(tb testing.TB, n int, mutate func(i int, c *dht.Config), h func(i int) dht.Handler) []*dht.Node {
	tb.Helper()
	cfgs := dht.Configs(n, LocalConfig())
	for i := range cfgs {
		cfgs[i].DataDir = tb.TempDir()
		if mutate != nil {
			mutate(i, &cfgs[i])
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), FormTimeout)
	defer cancel()
	nodes, err := dht.StartNodes(ctx, cfgs, h)
	if err != nil {
		tb.Fatalf("dhttest: start cluster of %d nodes: %v", n, err)
	}
	for _, nd := range nodes {
		tb.Cleanup(func() { _ = nd.Close() })
	}
	return nodes
}

// LocalConfig returns the base config of StartCluster: loopback addresses,
// the local timer profile, logs discarded.
func LocalConfig() dht.Config {
	c := dht.DefaultConfig()
	c.Profile = dht.ProfileLocal
	c.Logger = discardLogger()
	return c
}
