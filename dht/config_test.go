package dht

import (
	"errors"
	"testing"
	"time"
)

func TestConfigValidate(t *testing.T) {
	ok := DefaultConfig()
	ok.Name = "n1"
	cases := []struct {
		name   string
		mutate func(c *Config)
		valid  bool
	}{
		{"defaults with name", func(*Config) {}, true},
		{"zero value with name", func(c *Config) { *c = Config{Name: "n1"} }, true},
		{"local profile and keys", func(c *Config) {
			c.Profile, c.NetworkKey, c.GossipKey = ProfileLocal, make([]byte, 32), make([]byte, 24)
		}, true},
		{"no name", func(c *Config) { c.Name = "" }, false},
		{"long name", func(c *Config) { c.Name = string(make([]byte, 200)) }, false},
		{"long API address", func(c *Config) { c.APIAddr = string(make([]byte, 200)) }, false},
		{"bad profile", func(c *Config) { c.Profile = "wan" }, false},
		{"bad listen address", func(c *Config) { c.ListenAddrs = []string{"tcp://1.2.3.4"} }, false},
		{"bad gossip address", func(c *Config) { c.GossipAddr = "127.0.0.1" }, false},
		{"bad gossip port", func(c *Config) { c.GossipAddr = "127.0.0.1:99999" }, false},
		{"short network key", func(c *Config) { c.NetworkKey = make([]byte, 16) }, false},
		{"bad gossip key", func(c *Config) { c.GossipKey = make([]byte, 20) }, false},
		{"negative timeout", func(c *Config) { c.RequestTimeout = -time.Second }, false},
		{"negative payload", func(c *Config) { c.MaxPayload = -1 }, false},
		{"faster probes", func(c *Config) {
			c.ProbeInterval, c.ProbeTimeout, c.SuspicionMult = 400*time.Millisecond, 150*time.Millisecond, 3
		}, true},
		{"probe timeout past the interval", func(c *Config) { c.ProbeTimeout = 2 * time.Second }, false},
		{"probe interval under the profile's timeout", func(c *Config) { c.ProbeInterval = 300 * time.Millisecond }, false},
		{"negative suspicion", func(c *Config) { c.SuspicionMult = -1 }, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.mutate(&c)
			err := c.Validate()
			if tc.valid && err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if !tc.valid && !errors.Is(err, ErrConfig) {
				t.Fatalf("Validate: %v, want ErrConfig", err)
			}
		})
	}
}

func TestMemberlistConfigProfiles(t *testing.T) {
	c := Config{Name: "n1", Profile: ProfileLocal, GossipAddr: "127.0.0.1:7946", ProbeInterval: 300 * time.Millisecond}
	mc := c.withDefaults().memberlistConfig()
	if mc.RetransmitMult != 4 || mc.BindPort != 7946 || mc.BindAddr != "127.0.0.1" || mc.ProbeInterval != 300*time.Millisecond {
		t.Fatalf("local profile: RetransmitMult %d, bind %s:%d, probe %v", mc.RetransmitMult, mc.BindAddr, mc.BindPort, mc.ProbeInterval)
	}
	lan := Config{Name: "n1"}.withDefaults().memberlistConfig()
	if lan.ProbeInterval != time.Second || lan.SuspicionMult != 4 {
		t.Fatalf("lan profile: probe %v, suspicion %d", lan.ProbeInterval, lan.SuspicionMult)
	}
}
