package dht

import (
	"errors"
	"slices"
	"testing"

	ma "github.com/multiformats/go-multiaddr"
)

func TestValidateAdvertise(t *testing.T) {
	cases := []struct {
		name  string
		c     Config
		valid bool
	}{
		{"none", Config{}, true},
		{"ip", Config{Advertise: "10.1.2.3"}, true},
		{"ipv6", Config{Advertise: "fd00::1"}, true},
		{"dns name", Config{Advertise: "node-a.svc.cluster.local"}, true},
		{"unspecified", Config{Advertise: "0.0.0.0"}, false},
		{"gossip host:port", Config{AdvertiseGossip: "10.1.2.3:7946"}, true},
		{"gossip without port", Config{AdvertiseGossip: "10.1.2.3"}, false},
		{"gossip without host", Config{AdvertiseGossip: ":7946"}, false},
		{"p2p multiaddr", Config{AdvertiseAddrs: []string{"/ip4/10.1.2.3/tcp/7949"}}, true},
		{"bad p2p multiaddr", Config{AdvertiseAddrs: []string{"10.1.2.3:7949"}}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.Name = "n1"
			err := tc.c.Validate()
			if tc.valid != (err == nil) || (err != nil && !errors.Is(err, ErrConfig)) {
				t.Fatalf("Validate: %v, want valid %v", err, tc.valid)
			}
		})
	}
}

func TestWithHost(t *testing.T) {
	bound := []ma.Multiaddr{
		ma.StringCast("/ip4/127.0.0.1/tcp/7949"), ma.StringCast("/ip4/10.0.0.5/tcp/7949"),
		ma.StringCast("/ip6/::1/tcp/7950"), ma.StringCast("/ip4/10.0.0.5/tcp/7951"),
	}
	cases := map[string][]string{
		"10.201.0.10": {"/ip4/10.201.0.10/tcp/7949", "/ip4/10.201.0.10/tcp/7950", "/ip4/10.201.0.10/tcp/7951"},
		"fd00::1":     {"/ip6/fd00::1/tcp/7949", "/ip6/fd00::1/tcp/7950", "/ip6/fd00::1/tcp/7951"},
		"node-a":      {"/dns/node-a/tcp/7949", "/dns/node-a/tcp/7950", "/dns/node-a/tcp/7951"},
	}
	for host, want := range cases {
		f := Config{Advertise: host}.addrsFactory()
		var got []string
		for _, a := range f(bound) {
			got = append(got, a.String())
		}
		if !slices.Equal(got, want) {
			t.Errorf("advertise %s: %v, want %v", host, got, want)
		}
	}
	if (Config{}).addrsFactory() != nil {
		t.Error("a factory without Advertise or AdvertiseAddrs")
	}
}

func TestMemberlistAdvertise(t *testing.T) {
	c := Config{Name: "n1", GossipAddr: "0.0.0.0:7946", Advertise: "10.201.0.10"}.withDefaults()
	if mc := c.memberlistConfig(); mc.AdvertiseAddr != "10.201.0.10" || mc.AdvertisePort != 7946 {
		t.Fatalf("advertise %s:%d", mc.AdvertiseAddr, mc.AdvertisePort)
	}
	c.AdvertiseGossip = "203.0.113.7:17946"
	if mc := c.memberlistConfig(); mc.AdvertiseAddr != "203.0.113.7" || mc.AdvertisePort != 17946 {
		t.Fatalf("advertise-gossip %s:%d", mc.AdvertiseAddr, mc.AdvertisePort)
	}
}
