package dht

import (
	"testing"

	rcmgr "github.com/libp2p/go-libp2p/p2p/host/resource-manager"
)

// TestResourceLimits checks the resource manager gets the configured
// counts, not infinite limits.
func TestResourceLimits(t *testing.T) {
	c := Config{Name: "n", MaxConns: 100, MaxPeerStreams: 50}.withDefaults()
	l := resourceLimits(c).ToPartialLimitConfig()
	for _, tc := range []struct {
		name      string
		got, want rcmgr.LimitVal
	}{
		{"system conns", l.System.Conns, 100},
		{"system FDs", l.System.FD, 100},
		{"peer conns", l.PeerDefault.Conns, peerConns},
		{"peer inbound streams", l.PeerDefault.StreamsInbound, 50},
		{"peer outbound streams", l.PeerDefault.StreamsOutbound, 50},
		{"transient conns", l.Transient.Conns, transientConns},
		{"transient streams", l.Transient.Streams, transientStreams},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	if d := resourceLimits(DefaultConfig()).ToPartialLimitConfig(); d.System.Conns != 1024 || d.PeerDefault.StreamsInbound != 4096 {
		t.Errorf("defaults: system conns %v, peer inbound streams %v", d.System.Conns, d.PeerDefault.StreamsInbound)
	}
}
