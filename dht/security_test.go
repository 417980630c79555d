package dht_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/dht"
	"github.com/shufflenode/shufflenode/dht/dhttest"
	"github.com/shufflenode/shufflenode/internal/testkit"
	"github.com/shufflenode/shufflenode/wire"
)

func startNode(t *testing.T, c dht.Config) *dht.Node {
	t.Helper()
	n, err := dht.New(context.Background(), c, ackHandler(0))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Close() })
	return n
}

func TestIdentityPersistsAcrossRestart(t *testing.T) {
	dir := t.TempDir()
	c := dhttest.LocalConfig()
	c.Name, c.DataDir = "n1", dir
	first := startNode(t, c).Self().PeerID
	if err := startNodeClosed(t, c); err != nil {
		t.Fatal(err)
	}
	again := startNode(t, c).Self().PeerID
	if again != first {
		t.Fatalf("peer ID changed across restart: %s then %s", first, again)
	}
	st, err := os.Stat(filepath.Join(dir, "identity.key"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("identity.key: %v, mode %v", err, st.Mode())
	}
	c.DataDir = t.TempDir()
	if other := startNode(t, c).Self().PeerID; other == first {
		t.Fatal("another data directory gave the same peer ID")
	}
}

// startNodeClosed starts and closes a node (the directory's lock-free key
// file must survive a close).
func startNodeClosed(t *testing.T, c dht.Config) error {
	t.Helper()
	n, err := dht.New(context.Background(), c, ackHandler(0))
	if err != nil {
		return err
	}
	return n.Close()
}

func TestCorruptIdentityIsAnError(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "identity.key"), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := dhttest.LocalConfig()
	c.Name, c.DataDir = "n1", dir
	if _, err := dht.New(context.Background(), c, ackHandler(0)); !errors.Is(err, dht.ErrIdentity) {
		t.Fatalf("New: %v, want ErrIdentity", err)
	}
}

// TestWrongNetworkKeyIsRefused puts a node with another private-network
// key (or none) into the gossip of a cluster with a key: memberlist lists
// it, but no libp2p connection can be made in either direction.
func TestWrongNetworkKeyIsRefused(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	cases := []struct {
		name string
		key  []byte
	}{
		{"other key", bytes.Repeat([]byte{8}, 32)},
		{"no key", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nodes := dhttest.StartCluster(t, 2, func(_ int, c *dht.Config) { c.NetworkKey = key }, ackHandler)
			if _, err := nodes[0].Request(context.Background(), "node-1", wire.TypeControl, nil); err != nil {
				t.Fatalf("request within the keyed cluster: %v", err)
			}
			c := dhttest.LocalConfig()
			c.Name, c.NetworkKey, c.Join = "intruder", tc.key, []string{nodes[0].Self().GossipAddr}
			intruder := startNode(t, c)
			waitMembers(t, nodes[0], 3)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if _, err := nodes[0].Request(ctx, "intruder", wire.TypeControl, nil); !errors.Is(err, dht.ErrTransport) {
				t.Fatalf("request to intruder: %v, want ErrTransport", err)
			}
			if _, err := intruder.Request(ctx, "node-1", wire.TypeControl, nil); !errors.Is(err, dht.ErrTransport) {
				t.Fatalf("request from intruder: %v, want ErrTransport", err)
			}
			if got := nodes[1].Stats().RequestsServed; got != 1 {
				t.Fatalf("node-1 served %d requests, want 1", got)
			}
		})
	}
}

func waitMembers(t *testing.T, n *dht.Node, want int) {
	t.Helper()
	testkit.WaitFor(t, 20*time.Second, fmt.Sprintf("%s to see %d members", n.Self().Name, want), func() bool { return len(n.Members()) == want })
}

func TestWrongGossipKeyCannotJoin(t *testing.T) {
	nodes := dhttest.StartCluster(t, 1, func(_ int, c *dht.Config) { c.GossipKey = bytes.Repeat([]byte{1}, 16) }, ackHandler)
	cases := []struct {
		name string
		key  []byte
	}{
		{"other key", bytes.Repeat([]byte{2}, 16)},
		{"no key", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := dhttest.LocalConfig()
			c.Name, c.GossipKey, c.Join = "intruder", tc.key, []string{nodes[0].Self().GossipAddr}
			n, err := dht.New(context.Background(), c, ackHandler(0))
			if err == nil {
				_ = n.Close()
			}
			if !errors.Is(err, dht.ErrJoin) {
				t.Fatalf("New: %v, want ErrJoin", err)
			}
		})
	}
	if got := names(nodes[0].Members()); len(got) != 1 {
		t.Fatalf("cluster members %v", got)
	}
}
