package main

import (
	"strings"
	"testing"

	"github.com/shufflenode/shufflenode/dht"
	"github.com/shufflenode/shufflenode/node"
)

func TestCheckCluster(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	for _, tc := range []struct {
		name     string
		cl       dht.Config
		insecure bool
		want     string // in the error; "" for none
	}{
		{"loopback needs no keys", dht.Config{GossipAddr: "127.0.0.1:7946", ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0"}}, false, ""},
		{"localhost needs no keys", dht.Config{GossipAddr: "localhost:7946", ListenAddrs: []string{"/dns4/localhost/tcp/0", "/ip6/::1/tcp/0"}}, false, ""},
		{"exposed gossip without a key", dht.Config{GossipAddr: "0.0.0.0:7946", NetworkKey: key}, false, "--gossip-key"},
		{"gossip on every interface (no host)", dht.Config{GossipAddr: ":7946", NetworkKey: key}, false, "--gossip-key"},
		{"exposed peer streams without a key", dht.Config{GossipAddr: "127.0.0.1:7946",
			ListenAddrs: []string{"/ip4/127.0.0.1/tcp/0", "/ip4/10.0.0.1/tcp/7949"}}, false, "--network-key"},
		{"an unknown multiaddr counts as exposed", dht.Config{GossipAddr: "127.0.0.1:7946", ListenAddrs: []string{"/unix/x"}}, false, "--network-key"},
		{"exposed with both keys", dht.Config{GossipAddr: "10.0.0.1:7946", GossipKey: key, NetworkKey: key,
			ListenAddrs: []string{"/ip4/0.0.0.0/tcp/7949"}}, false, ""},
		{"exposed and --insecure-cluster", dht.Config{GossipAddr: "0.0.0.0:7946", ListenAddrs: []string{"/ip4/0.0.0.0/tcp/7949"}}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkCluster(node.Config{Cluster: tc.cl}, tc.insecure)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("checkCluster: %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "--insecure-cluster")):
				t.Fatalf("checkCluster: %v, want an error naming %s and --insecure-cluster", err, tc.want)
			}
		})
	}
}
