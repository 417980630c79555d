package main

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// layered runs serve's flag parsing with a config file holding fileJSON
// (none if empty) and the environment env.
func layered(t *testing.T, fileJSON string, env map[string]string, args ...string) (serveFlags, string, error) {
	t.Helper()
	path := ""
	if fileJSON != "" {
		path = filepath.Join(t.TempDir(), "shufflenode.json")
		if err := os.WriteFile(path, []byte(fileJSON), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append([]string{"--config", path}, args...)
	}
	var f serveFlags
	fs := newServeFlags(&f, io.Discard)
	err := parseLayered(fs, args, mapEnv(env))
	return f, path, err
}

func mapEnv(env map[string]string) lookupFunc {
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

func TestConfigPrecedence(t *testing.T) {
	file := `{"name": "file", "data_dir": "/file", "memory_limit": "2GiB", "join": ["a:1", "b:2"], "log_level": "warn"}`
	cases := []struct {
		name string
		file string
		env  map[string]string
		args []string
		want func(f serveFlags) bool
	}{
		{"defaults", "", nil, nil,
			func(f serveFlags) bool {
				return f.dataDir == "shufflenode-data" && f.memLimit == 1<<30 && f.api == "127.0.0.1:7947"
			}},
		{"file over defaults", file, nil, nil,
			func(f serveFlags) bool {
				return f.name == "file" && f.dataDir == "/file" && f.memLimit == 2<<30 && f.join == "a:1,b:2" && f.api == "127.0.0.1:7947"
			}},
		{"env over file", file, map[string]string{"SHUFFLENODE_NAME": "env", "SHUFFLENODE_MEMORY_LIMIT": "3GiB"}, nil,
			func(f serveFlags) bool { return f.name == "env" && f.memLimit == 3<<30 && f.dataDir == "/file" }},
		{"flag over env and file", file, map[string]string{"SHUFFLENODE_NAME": "env"}, []string{"--name", "flag", "--memory-limit=5GiB"},
			func(f serveFlags) bool { return f.name == "flag" && f.memLimit == 5<<30 && f.logLevel == "warn" }},
		{"flag equal to the default still wins", file, nil, []string{"--log-level", "info"},
			func(f serveFlags) bool { return f.logLevel == "info" }},
		{"empty env counts as unset", file, map[string]string{"SHUFFLENODE_JOIN": ""}, nil,
			func(f serveFlags) bool { return f.join == "a:1,b:2" }},
		{"env without a file", "", map[string]string{"SHUFFLENODE_GOSSIP": "0.0.0.0:7946", "SHUFFLENODE_LISTEN": "/ip4/0.0.0.0/tcp/7949"}, nil,
			func(f serveFlags) bool { return f.gossip == "0.0.0.0:7946" && f.listen == "/ip4/0.0.0.0/tcp/7949" }},
		{"list as a string, size as a number", `{"listen": "/ip4/1.2.3.4/tcp/1,/ip4/1.2.3.4/tcp/2", "memory_limit": 1048576}`, nil, nil,
			func(f serveFlags) bool {
				return f.listen == "/ip4/1.2.3.4/tcp/1,/ip4/1.2.3.4/tcp/2" && f.memLimit == 1<<20
			}},
		{"size as a decimal number", `{"memory_limit": 1e9}`, nil, nil,
			func(f serveFlags) bool { return f.memLimit == 1e9 }},
		{"empty object", `{}`, nil, nil,
			func(f serveFlags) bool { return f.dataDir == "shufflenode-data" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, _, err := layered(t, c.file, c.env, c.args...)
			if err != nil {
				t.Fatal(err)
			}
			if !c.want(f) {
				t.Errorf("got %+v", f)
			}
		})
	}
}

// TestConfigFromEnvPath checks SHUFFLENODE_CONFIG names the file and
// --config beats it.
func TestConfigFromEnvPath(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	os.WriteFile(a, []byte(`{"name": "from-a"}`), 0o600)
	os.WriteFile(b, []byte(`{"name": "from-b"}`), 0o600)
	for _, c := range []struct {
		name string
		args []string
		want string
	}{{"env path", nil, "from-a"}, {"flag beats env path", []string{"--config", b}, "from-b"}} {
		t.Run(c.name, func(t *testing.T) {
			var f serveFlags
			fs := newServeFlags(&f, io.Discard)
			if err := parseLayered(fs, c.args, mapEnv(map[string]string{"SHUFFLENODE_CONFIG": a})); err != nil {
				t.Fatal(err)
			}
			if f.name != c.want {
				t.Errorf("name %q, want %q", f.name, c.want)
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	cases := []struct {
		name string
		file string
		env  map[string]string
		want []string // substrings of the error; "FILE" stands for the path
	}{
		{"unknown key", `{"name": "a", "memory": "1GiB"}`, nil, []string{"FILE", `unknown key "memory"`, "memory_limit"}},
		{"flag spelling is not a key", `{"data-dir": "/x"}`, nil, []string{"FILE", `unknown key "data-dir"`}},
		{"config is not a key", `{"config": "/x"}`, nil, []string{"FILE", `unknown key "config"`}},
		{"bad size", `{"memory_limit": "lots"}`, nil, []string{"FILE", `key "memory_limit"`, `invalid size "lots"`}},
		{"negative size", `{"memory_limit": -5}`, nil, []string{"FILE", `key "memory_limit"`, "invalid size"}},
		{"number for a string", `{"name": 5}`, nil, []string{"FILE", `key "name"`, "want a string"}},
		{"array for a non-list", `{"api": ["a:1"]}`, nil, []string{"FILE", `key "api"`, "want a string"}},
		{"object for a list", `{"join": {"a": 1}}`, nil, []string{"FILE", `key "join"`, "array of strings"}},
		{"null", `{"name": null}`, nil, []string{"FILE", `key "name"`, "got null"}},
		{"comma inside a list element", `{"join": ["a:1,b:2"]}`, nil, []string{"FILE", `key "join"`, "contains a comma"}},
		{"repeated key", `{"name": "a", "name": "b"}`, nil, []string{"FILE", `key "name" given twice`}},
		{"not an object", `["name"]`, nil, []string{"FILE", "want one JSON object"}},
		{"trailing data", `{"name": "a"} {}`, nil, []string{"FILE", "data after the JSON object"}},
		{"bad JSON", `{"name": "a",}`, nil, []string{"FILE", "bad JSON"}},
		{"truncated", `{"name": "a"`, nil, []string{"FILE", "bad JSON"}},
		{"bad env size", `{}`, map[string]string{"SHUFFLENODE_MEMORY_LIMIT": "x"}, []string{"SHUFFLENODE_MEMORY_LIMIT", `invalid size "x"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, path, err := layered(t, c.file, c.env)
			if !errors.Is(err, errConfig) {
				t.Fatalf("err = %v, want errConfig", err)
			}
			for _, w := range c.want {
				if w == "FILE" {
					w = path
				}
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestConfigMissingFile(t *testing.T) {
	var f serveFlags
	err := parseLayered(newServeFlags(&f, io.Discard), []string{"--config", "/nonexistent/x.json"}, mapEnv(nil))
	if !errors.Is(err, errConfig) || !strings.Contains(err.Error(), "/nonexistent/x.json") {
		t.Errorf("err = %v", err)
	}
}

// TestConfigBadFlag checks flag errors stay flag errors (exit status 2,
// printed by the flag package) and -h is help.
func TestConfigBadFlag(t *testing.T) {
	var f serveFlags
	if err := parseLayered(newServeFlags(&f, io.Discard), []string{"--nope"}, mapEnv(nil)); err == nil || errors.Is(err, errConfig) {
		t.Errorf("unknown flag: err = %v", err)
	}
	if err := parseLayered(newServeFlags(&f, io.Discard), []string{"-h"}, mapEnv(nil)); err != flag.ErrHelp {
		t.Errorf("-h: err = %v", err)
	}
}

// TestEveryFlagHasKeyAndEnv checks the derived names of every serve flag.
func TestEveryFlagHasKeyAndEnv(t *testing.T) {
	var f serveFlags
	fs := newServeFlags(&f, io.Discard)
	var got []string
	fs.VisitAll(func(fl *flag.Flag) { got = append(got, fl.Name+" "+configKey(fl.Name)+" "+envName(fl.Name)) })
	want := []string{
		"admin admin SHUFFLENODE_ADMIN", "api api SHUFFLENODE_API", "config config SHUFFLENODE_CONFIG",
		"data-dir data_dir SHUFFLENODE_DATA_DIR", "gossip gossip SHUFFLENODE_GOSSIP",
		"gossip-key gossip_key SHUFFLENODE_GOSSIP_KEY", "join join SHUFFLENODE_JOIN", "listen listen SHUFFLENODE_LISTEN",
		"log-level log_level SHUFFLENODE_LOG_LEVEL", "memory-limit memory_limit SHUFFLENODE_MEMORY_LIMIT",
		"name name SHUFFLENODE_NAME", "network-key network_key SHUFFLENODE_NETWORK_KEY", "profile profile SHUFFLENODE_PROFILE",
	}
	if !slices.Equal(got, want) {
		t.Errorf("flags and names changed (update README's Deploying table):\n got %q\nwant %q", got, want)
	}
}

// TestDeployConfigs loads every JSON config under deploy/ and checks the
// node.Config it gives passes dht's validation (key files aside: they
// exist only on a deployed host).
func TestDeployConfigs(t *testing.T) {
	paths, _ := filepath.Glob("../../deploy/*.json")
	if len(paths) < 2 {
		t.Fatalf("found %v, want config.example.json and container-config.json", paths)
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			var f serveFlags
			if err := parseLayered(newServeFlags(&f, io.Discard), []string{"--config", p, "--name", "n"}, mapEnv(nil)); err != nil {
				t.Fatal(err)
			}
			f.networkKey, f.gossipKey = "", ""
			cfg, err := f.config()
			if err != nil {
				t.Fatal(err)
			}
			if err := cfg.Cluster.Validate(); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestDeployFilesUseRealFlags scans the Dockerfile, the manifests and the
// systemd unit for serve flags, SHUFFLENODE_ variables and embedded config
// keys, and checks each exists: a renamed flag must not leave deploy/ stale.
func TestDeployFilesUseRealFlags(t *testing.T) {
	var f serveFlags
	fs := newServeFlags(&f, io.Discard)
	files := []string{"Dockerfile", "shufflenode.service", "k8s/daemonset.yaml", "k8s/sidecar.yaml"}
	flagRe := regexp.MustCompile(`(?:^|[\s"'\[])--([a-z][a-z-]*)`)
	envRe := regexp.MustCompile(`SHUFFLENODE_[A-Z_]+`)
	keyRe := regexp.MustCompile(`(?m)^\s*"([a-z_]+)":`)
	keys := flagsByKey(fs)
	notServe := map[string]bool{"mount": true, "from": true, "chown": true, "from-file": true, "system": true,
		"no-create-home": true, "shell": true, "now": true}
	for _, name := range files {
		b, err := os.ReadFile(filepath.Join("../../deploy", name))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range flagRe.FindAllStringSubmatch(string(b), -1) {
			if fs.Lookup(m[1]) == nil && !notServe[m[1]] {
				t.Errorf("%s: --%s is not a serve flag", name, m[1])
			}
		}
		for _, v := range envRe.FindAllString(string(b), -1) {
			if fs.Lookup(strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(v, envPrefix), "_", "-"))) == nil {
				t.Errorf("%s: %s names no serve flag", name, v)
			}
		}
		for _, m := range keyRe.FindAllStringSubmatch(string(b), -1) {
			if keys[m[1]] == nil {
				t.Errorf("%s: config key %q names no serve flag", name, m[1])
			}
		}
	}
}

// TestManifestArgs takes the serve arguments of each Kubernetes manifest
// (lines "- --flag=value"), substitutes the downward-API variables, and
// checks they give a valid cluster config with the pod IP everywhere
// another node or a client needs it.
func TestManifestArgs(t *testing.T) {
	argRe := regexp.MustCompile(`(?m)^\s*- (--[a-z-]+=\S+)\s*$`)
	vars := strings.NewReplacer("$(POD_IP)", "10.1.2.3", "$(NODE_NAME)", "host-1", "$(POD_NAME)", "pod-1", "$(POD_NAMESPACE)", "ns")
	for _, name := range []string{"daemonset.yaml", "sidecar.yaml"} {
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("../../deploy/k8s", name))
			if err != nil {
				t.Fatal(err)
			}
			var args []string
			for _, m := range argRe.FindAllStringSubmatch(string(b), -1) {
				if !strings.HasPrefix(m[1], "--config=") { // the ConfigMap exists only in the cluster
					args = append(args, vars.Replace(m[1]))
				}
			}
			var f serveFlags
			if err := parseLayered(newServeFlags(&f, io.Discard), args, mapEnv(nil)); err != nil {
				t.Fatal(err)
			}
			cfg, err := f.config()
			if err != nil {
				t.Fatal(err)
			}
			if err := cfg.Cluster.Validate(); err != nil {
				t.Error(err)
			}
			if cfg.APIAddr != "10.1.2.3:7947" || cfg.Cluster.GossipAddr != "10.1.2.3:7946" ||
				!slices.Equal(cfg.Cluster.ListenAddrs, []string{"/ip4/10.1.2.3/tcp/7949"}) || len(cfg.Cluster.Join) != 1 {
				t.Errorf("args %q give %+v", args, cfg)
			}
		})
	}
}
