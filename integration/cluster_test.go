package integration

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/api"
	"github.com/shufflenode/shufflenode/dht"
	"github.com/shufflenode/shufflenode/node"
	"github.com/shufflenode/shufflenode/service"
)

// startCluster runs n real nodes on 127.0.0.1 with a per-node memory
// budget; they are closed when the test ends.
func startCluster(t *testing.T, n int, memLimit int64) []*node.Node {
	t.Helper()
	return startClusterWith(t, n, service.Config{MemoryLimit: memLimit})
}

// startClusterWith is startCluster with the nodes' service configuration,
// and then each of more applied to the node config.
func startClusterWith(t *testing.T, n int, svc service.Config, more ...func(*node.Config)) []*node.Node {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	log := testLogger()
	svc.Logger = log
	cfg := node.Config{
		Cluster: dht.Config{DataDir: t.TempDir(), Profile: "local", Logger: log},
		Service: svc,
		Logger:  log,
		// a reader that keeps a received record past its release sees garbage
		APISecurity: api.Security{PoisonReleased: true},
	}
	for _, fn := range more {
		fn(&cfg)
	}
	nodes, err := node.StartLocal(ctx, n, cfg)
	if err != nil {
		t.Fatalf("starting %d nodes: %v", n, err)
	}
	t.Cleanup(func() { node.CloseAll(nodes) })
	return nodes
}

// apiAddrs lists the nodes' Flight addresses.
func apiAddrs(nodes []*node.Node) []string {
	addrs := make([]string, len(nodes))
	for i, n := range nodes {
		addrs[i] = n.APIAddr()
	}
	return addrs
}

// testLogger logs warnings and errors (debug with SHUFFLENODE_TEST_DEBUG=1).
func testLogger() *slog.Logger {
	level := slog.LevelWarn
	if os.Getenv("SHUFFLENODE_TEST_DEBUG") != "" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}
