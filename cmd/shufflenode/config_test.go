package main

import (
	"encoding/json"
	"errors"
	"flag"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// layered runs serve's flag parsing with a config file holding content
// (none if empty; named .json if it starts with "{", else .yaml: the name
// does not change how it is read) and the environment env.
func layered(t *testing.T, content string, env map[string]string, args ...string) (serveFlags, string, error) {
	t.Helper()
	path := ""
	if content != "" {
		path = writeConfig(t, content)
		args = append([]string{"--config", path}, args...)
	}
	var f serveFlags
	fs := newServeFlags(&f, io.Discard)
	err := parseLayered(fs, args, mapEnv(env))
	return f, path, err
}

func writeConfig(t testing.TB, content string) string {
	t.Helper()
	name := "shufflenode.yaml"
	if strings.HasPrefix(content, "{") {
		name = "shufflenode.json"
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func mapEnv(env map[string]string) lookupFunc {
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

const (
	yamlFile = `# a comment
name: file
data_dir: /file   # a trailing comment
memory_limit: 62.5MiB
join:
  - a:1
  - b:2
log_level: warn
`
	jsonFile = `{"name": "file", "data_dir": "/file", "memory_limit": "2GiB", "join": ["a:1", "b:2"], "log_level": "warn"}`
)

func TestConfigPrecedence(t *testing.T) {
	const mib62 = 62.5 * (1 << 20)
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
		{"YAML file over defaults", yamlFile, nil, nil,
			func(f serveFlags) bool {
				return f.name == "file" && f.dataDir == "/file" && f.memLimit == mib62 && f.join == "a:1,b:2" &&
					f.logLevel == "warn" && f.api == "127.0.0.1:7947"
			}},
		{"JSON file still accepted", jsonFile, nil, nil,
			func(f serveFlags) bool {
				return f.name == "file" && f.dataDir == "/file" && f.memLimit == 2<<30 && f.join == "a:1,b:2" && f.api == "127.0.0.1:7947"
			}},
		{"env over YAML file", yamlFile, map[string]string{"SHUFFLENODE_NAME": "env", "SHUFFLENODE_JOIN": "c:3"}, nil,
			func(f serveFlags) bool {
				return f.name == "env" && f.join == "c:3" && f.dataDir == "/file" && f.memLimit == mib62
			}},
		{"env over JSON file", jsonFile, map[string]string{"SHUFFLENODE_NAME": "env", "SHUFFLENODE_MEMORY_LIMIT": "3GiB"}, nil,
			func(f serveFlags) bool { return f.name == "env" && f.memLimit == 3<<30 && f.dataDir == "/file" }},
		{"flag over env and YAML file", yamlFile, map[string]string{"SHUFFLENODE_NAME": "env"}, []string{"--name", "flag", "--memory-limit=5GiB"},
			func(f serveFlags) bool { return f.name == "flag" && f.memLimit == 5<<30 && f.logLevel == "warn" }},
		{"flag equal to the default still wins", yamlFile, nil, []string{"--log-level", "info"},
			func(f serveFlags) bool { return f.logLevel == "info" }},
		{"empty env counts as unset", yamlFile, map[string]string{"SHUFFLENODE_JOIN": ""}, nil,
			func(f serveFlags) bool { return f.join == "a:1,b:2" }},
		{"env without a file", "", map[string]string{"SHUFFLENODE_GOSSIP": "0.0.0.0:7946", "SHUFFLENODE_LISTEN": "/ip4/0.0.0.0/tcp/7949"}, nil,
			func(f serveFlags) bool { return f.gossip == "0.0.0.0:7946" && f.listen == "/ip4/0.0.0.0/tcp/7949" }},
		{"flow list, size as an integer", "listen: [/ip4/1.2.3.4/tcp/1, '/ip4/1.2.3.4/tcp/2']\nmemory_limit: 1048576\n", nil, nil,
			func(f serveFlags) bool {
				return f.listen == "/ip4/1.2.3.4/tcp/1,/ip4/1.2.3.4/tcp/2" && f.memLimit == 1<<20
			}},
		{"failure detector timers reach the cluster config", "probe_interval: 400ms\nsuspicion_mult: 3\n", map[string]string{"SHUFFLENODE_PROBE_TIMEOUT": "150ms"}, nil,
			func(f serveFlags) bool {
				c, err := f.config()
				return err == nil && c.Cluster.ProbeInterval == 400*time.Millisecond && c.Cluster.ProbeTimeout == 150*time.Millisecond &&
					c.Cluster.SuspicionMult == 3
			}},
		{"output roots as a list reach the API security", "output_root: [/srv/out, /mnt/shared]\n", nil, nil,
			func(f serveFlags) bool {
				c, err := f.config()
				return err == nil && slices.Equal(c.APISecurity.OutputRoots, []string{"/srv/out", "/mnt/shared"})
			}},
		{"input roots as a list reach the API security", "input_root: [/srv/in, /mnt/shared]\n", nil, nil,
			func(f serveFlags) bool {
				c, err := f.config()
				return err == nil && slices.Equal(c.APISecurity.InputRoots, []string{"/srv/in", "/mnt/shared"})
			}},
		{"input roots from the environment", "", map[string]string{"SHUFFLENODE_INPUT_ROOT": "/data/a,/data/b"}, nil,
			func(f serveFlags) bool {
				c, err := f.config()
				return err == nil && slices.Equal(c.APISecurity.InputRoots, []string{"/data/a", "/data/b"})
			}},
		{"list as a string", "join: a:1, b:2\n", nil, nil,
			func(f serveFlags) bool {
				return f.join == "a:1, b:2" && slices.Equal(splitList(f.join), []string{"a:1", "b:2"})
			}},
		{"empty list", "join: []\n", map[string]string{}, nil,
			func(f serveFlags) bool { return f.join == "" }},
		{"JSON list as a string, size as a number", `{"listen": "/ip4/1.2.3.4/tcp/1,/ip4/1.2.3.4/tcp/2", "memory_limit": 1048576}`, nil, nil,
			func(f serveFlags) bool {
				return f.listen == "/ip4/1.2.3.4/tcp/1,/ip4/1.2.3.4/tcp/2" && f.memLimit == 1<<20
			}},
		{"JSON size as a decimal number", `{"memory_limit": 1e9}`, nil, nil,
			func(f serveFlags) bool { return f.memLimit == 1e9 }},
		{"size in hex", "memory_limit: 0x100000\n", nil, nil,
			func(f serveFlags) bool { return f.memLimit == 1<<20 }},
		{"size with a space before the unit", "memory_limit: 1.5 GiB\n", nil, nil,
			func(f serveFlags) bool { return f.memLimit == 3<<29 }},
		{"quoted values stay strings", "name: \"01\"\nlog_level: 'debug'\nadmin: \"\"\n", nil, nil,
			func(f serveFlags) bool { return f.name == "01" && f.logLevel == "debug" && f.admin == "" }},
		{"explicit string tag", "name: !!str 007\n", nil, nil,
			func(f serveFlags) bool { return f.name == "007" }},
		{"anchor and aliases", "gossip: &g 10.0.0.1:7946\njoin: [*g, 10.0.0.2:7946]\nlisten: &l [/ip4/10.0.0.1/tcp/7949]\n", nil, nil,
			func(f serveFlags) bool { return f.gossip == "10.0.0.1:7946" && f.join == "10.0.0.1:7946,10.0.0.2:7946" }},
		{"advertise keys, env and list", "advertise: node-a.example\nadvertise_p2p: [/dns/a/tcp/1, /ip4/10.0.0.1/tcp/1]\nrejoin_interval: 5s\n",
			map[string]string{"SHUFFLENODE_ADVERTISE_API": "10.0.0.1:443"}, []string{"--advertise-gossip", "10.0.0.1:80"},
			func(f serveFlags) bool {
				return f.advertise == "node-a.example" && f.advP2P == "/dns/a/tcp/1,/ip4/10.0.0.1/tcp/1" &&
					f.advAPI == "10.0.0.1:443" && f.advGossip == "10.0.0.1:80" && f.rejoinInterval == 5*time.Second
			}},
		{"block string", "name: >-\n  folded\n", nil, nil,
			func(f serveFlags) bool { return f.name == "folded" }},
		{"document markers", "---\nname: doc\n...\n", nil, nil,
			func(f serveFlags) bool { return f.name == "doc" }},
		{"empty JSON object", `{}`, nil, nil,
			func(f serveFlags) bool { return f.dataDir == "shufflenode-data" }},
		{"only comments", "# name: x\n", nil, nil,
			func(f serveFlags) bool { return f.dataDir == "shufflenode-data" }},
		{"empty document", "---\n", nil, nil,
			func(f serveFlags) bool { return f.dataDir == "shufflenode-data" }},
		{"tab-indented JSON", "{\n\t\"name\": \"tab\",\n\t\"join\": [\"a:1\"]\n}\n", nil, nil,
			func(f serveFlags) bool { return f.name == "tab" && f.join == "a:1" }},
		{"JSON escapes YAML lacks", `{"name": "caf\u00e9\/x\ud83d\ude00", "data_dir": "\\\/\\u0041"}`, nil, nil,
			func(f serveFlags) bool { return f.name == "café/x\U0001F600" && f.dataDir == `\/\u0041` }},
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
	a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.json")
	os.WriteFile(a, []byte("name: from-a\n"), 0o600)
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
		{"unknown key", "name: a\nmemory: 1GiB\n", nil, []string{"FILE: line 2:", `unknown key "memory"`, "memory_limit"}},
		{"unknown key in JSON", `{"name": "a", "memory": "1GiB"}`, nil, []string{"FILE: line 1:", `unknown key "memory"`}},
		{"flag spelling is not a key", "data-dir: /x\n", nil, []string{"FILE", `unknown key "data-dir"`}},
		{"config is not a key", "config: /x\n", nil, []string{"FILE", `unknown key "config"`}},
		{"merge keys are not keys", "<<: {name: a}\n", nil, []string{"FILE", `unknown key "<<"`}},
		{"duplicate key", "name: a\ndata_dir: /x\nname: b\n", nil, []string{"FILE: line 3:", `key "name" given twice (first at line 1)`}},
		{"duplicate key in JSON", `{"name": "a", "name": "b"}`, nil, []string{"FILE", `key "name" given twice`}},
		{"nested mapping", "name:\n  first: a\n", nil, []string{"FILE: line 1:", `key "name"`, "want a string, got a mapping"}},
		{"nested mapping for a list", "join:\n  a: 1\n", nil, []string{"FILE", `key "join"`, "a list of strings, got a mapping"}},
		{"JSON object for a list", `{"join": {"a": 1}}`, nil, []string{"FILE", `key "join"`, "got a mapping"}},
		{"number for a string", "name: 01\n", nil, []string{"FILE", `key "name"`, "want a string, got the number 01", `quote it for a string: "01"`}},
		{"JSON number for a string", `{"name": 5}`, nil, []string{"FILE", `key "name"`, "want a string"}},
		{"boolean for a string", "\nlog_level: true\n", nil, []string{"FILE: line 2:", `key "log_level"`, "got bool true"}},
		{"timestamp for a string", "name: 2001-12-14\n", nil, []string{"FILE", `key "name"`, "got timestamp"}},
		{"null", "admin:\n", nil, []string{"FILE", `key "admin"`, "got null", `write ""`}},
		{"JSON null", `{"name": null}`, nil, []string{"FILE", `key "name"`, "got null"}},
		{"list for a non-list", "api: [a:1]\n", nil, []string{"FILE", `key "api"`, "want a string, got a list"}},
		{"number in a list", "join:\n  - a:1\n  - 7\n", nil, []string{"FILE", `key "join"`, "list element 2: want a string, got the number 7"}},
		{"list in a list", "join: [[a:1]]\n", nil, []string{"FILE", `key "join"`, "list element 1", "got a list"}},
		{"comma inside a list element", "join: [\"a:1,b:2\"]\n", nil, []string{"FILE", `key "join"`, "contains a comma"}},
		{"bad size", "memory_limit: lots\n", nil, []string{"FILE", `key "memory_limit"`, `invalid size "lots"`}},
		{"negative size", "memory_limit: -5\n", nil, []string{"FILE", `key "memory_limit"`, "invalid size -5"}},
		{"fractional bytes", "memory_limit: 1.5\n", nil, []string{"FILE", `key "memory_limit"`, "invalid size 1.5", "whole number"}},
		{"size beyond int64", "memory_limit: 1e30\n", nil, []string{"FILE", `key "memory_limit"`, "invalid size 1e30"}},
		{"size beyond int64 as an integer", "memory_limit: 9223372036854775808\n", nil, []string{"FILE", `key "memory_limit"`, "invalid size"}},
		{"infinite size", "memory_limit: .inf\n", nil, []string{"FILE", `key "memory_limit"`, "invalid size .inf"}},
		{"boolean size", "memory_limit: false\n", nil, []string{"FILE", `key "memory_limit"`, "number of bytes, got bool false"}},
		{"a list, not a mapping", "- name\n", nil, []string{"FILE", "line 1: want a mapping of keys to values, got a list"}},
		{"a scalar, not a mapping", "hello\n", nil, []string{"FILE", `want a mapping of keys to values, got "hello"`}},
		{"a list key", "? [a]\n: b\n", nil, []string{"FILE", "a key must be a string, got a list"}},
		{"two documents", "name: a\n---\nname: b\n", nil, []string{"FILE", "a second YAML document"}},
		{"JSON trailing data", `{"name": "a"} {}`, nil, []string{"FILE", "bad YAML"}},
		{"truncated JSON", `{"name": "a"`, nil, []string{"FILE", "bad YAML"}},
		{"bad indentation", "name: a\n  data_dir: b\n", nil, []string{"FILE", "bad YAML: line 2"}},
		{"tab indentation", "join:\n\t- a:1\n", nil, []string{"FILE", "bad YAML"}},
		{"bad env size", "name: a\n", map[string]string{"SHUFFLENODE_MEMORY_LIMIT": "x"}, []string{"SHUFFLENODE_MEMORY_LIMIT", `invalid size "x"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, path, err := layered(t, c.file, c.env)
			if !errors.Is(err, errConfig) {
				t.Fatalf("err = %v, want errConfig", err)
			}
			for _, w := range c.want {
				w = strings.ReplaceAll(w, "FILE", path)
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
		"admin admin SHUFFLENODE_ADMIN", "advertise advertise SHUFFLENODE_ADVERTISE",
		"advertise-api advertise_api SHUFFLENODE_ADVERTISE_API", "advertise-gossip advertise_gossip SHUFFLENODE_ADVERTISE_GOSSIP",
		"advertise-p2p advertise_p2p SHUFFLENODE_ADVERTISE_P2P", "api api SHUFFLENODE_API",
		"api-cert api_cert SHUFFLENODE_API_CERT", "api-client-ca api_client_ca SHUFFLENODE_API_CLIENT_CA",
		"api-key api_key SHUFFLENODE_API_KEY", "api-token-file api_token_file SHUFFLENODE_API_TOKEN_FILE",
		"config config SHUFFLENODE_CONFIG",
		"data-dir data_dir SHUFFLENODE_DATA_DIR", "drain-timeout drain_timeout SHUFFLENODE_DRAIN_TIMEOUT", "gossip gossip SHUFFLENODE_GOSSIP",
		"gossip-key gossip_key SHUFFLENODE_GOSSIP_KEY", "idle-expiry idle_expiry SHUFFLENODE_IDLE_EXPIRY",
		"input-root input_root SHUFFLENODE_INPUT_ROOT", "insecure-api insecure_api SHUFFLENODE_INSECURE_API", "insecure-cluster insecure_cluster SHUFFLENODE_INSECURE_CLUSTER", "join join SHUFFLENODE_JOIN",
		"keep-regions keep_regions SHUFFLENODE_KEEP_REGIONS", "listen listen SHUFFLENODE_LISTEN",
		"log-level log_level SHUFFLENODE_LOG_LEVEL",
		"max-api-connections max_api_connections SHUFFLENODE_MAX_API_CONNECTIONS", "max-api-streams max_api_streams SHUFFLENODE_MAX_API_STREAMS",
		"max-call-message max_call_message SHUFFLENODE_MAX_CALL_MESSAGE", "max-partitions max_partitions SHUFFLENODE_MAX_PARTITIONS", "max-runs max_runs SHUFFLENODE_MAX_RUNS",
		"max-shuffles max_shuffles SHUFFLENODE_MAX_SHUFFLES", "max-tasks max_tasks SHUFFLENODE_MAX_TASKS",
		"memory-limit memory_limit SHUFFLENODE_MEMORY_LIMIT",
		"name name SHUFFLENODE_NAME", "network-key network_key SHUFFLENODE_NETWORK_KEY", "op-memory op_memory SHUFFLENODE_OP_MEMORY", "output-root output_root SHUFFLENODE_OUTPUT_ROOT",
		"pprof pprof SHUFFLENODE_PPROF", "probe-interval probe_interval SHUFFLENODE_PROBE_INTERVAL",
		"probe-timeout probe_timeout SHUFFLENODE_PROBE_TIMEOUT", "profile profile SHUFFLENODE_PROFILE",
		"rejoin-interval rejoin_interval SHUFFLENODE_REJOIN_INTERVAL", "suspicion-mult suspicion_mult SHUFFLENODE_SUSPICION_MULT",
	}
	if !slices.Equal(got, want) {
		t.Errorf("flags and names changed (update the settings table of docs/operations.md):\n got %q\nwant %q", got, want)
	}
}

// deployConfigs returns the config files of deploy/: the top-level YAML
// files and the ConfigMap of the DaemonSet, written to a temporary file.
func deployConfigs(t testing.TB) map[string]string {
	t.Helper()
	paths, _ := filepath.Glob("../../deploy/*.yaml")
	out := map[string]string{}
	for _, p := range paths {
		out[filepath.Base(p)] = p
	}
	out["k8s ConfigMap"] = writeConfig(t, configMapFile(t, "../../deploy/k8s/daemonset.yaml", "config.yaml"))
	return out
}

// configMapFile returns the data key of the ConfigMap in a manifest.
func configMapFile(t testing.TB, manifest, key string) string {
	t.Helper()
	b, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	for {
		var obj struct {
			Kind string
			Data map[string]string
		}
		if err := dec.Decode(&obj); err != nil {
			t.Fatalf("%s: no ConfigMap with %q: %v", manifest, key, err)
		}
		if obj.Kind == "ConfigMap" && obj.Data[key] != "" {
			return obj.Data[key]
		}
	}
}

// TestDeployConfigs loads every config under deploy/ and checks the
// node.Config it gives passes dht's validation (key, token and certificate
// files aside: they exist only on a deployed host), holds what the file
// means, keeps the admin port on loopback without pprof, and guards an
// exposed API and exposed cluster ports with their keys (serve would start).
func TestDeployConfigs(t *testing.T) {
	want := map[string]func(f serveFlags) bool{
		"config.example.yaml": func(f serveFlags) bool {
			return f.memLimit == 4<<30 && f.join == "10.0.0.11:7946,10.0.0.12:7946,10.0.0.13:7946" &&
				f.listen == "/ip4/10.0.0.11/tcp/7949" && f.api == "10.0.0.11:7947" && f.gossipKey == "/etc/shufflenode/gossip.key" &&
				f.admin == "127.0.0.1:7948" && f.sec.tokenFile != "" && f.sec.cert != "" && f.limits.partitions == 1<<18
		},
		"container-config.yaml": func(f serveFlags) bool {
			return f.api == "0.0.0.0:7947" && f.listen == "/ip4/0.0.0.0/tcp/7949" && f.dataDir == "/var/lib/shufflenode" &&
				f.admin == "127.0.0.1:7948" && f.sec.tokenFile != "" && f.gossipKey != "" && f.networkKey != ""
		},
		"k8s ConfigMap": func(f serveFlags) bool {
			return f.memLimit == 1<<30 && f.networkKey == "/etc/shufflenode-keys/network.key" && f.dataDir == "/var/lib/shufflenode" &&
				f.sec.tokenFile == "/etc/shufflenode-keys/api.token"
		},
	}
	configs := deployConfigs(t)
	if len(configs) != len(want) {
		t.Fatalf("found %v, want %d configs", configs, len(want))
	}
	for name, p := range configs {
		t.Run(name, func(t *testing.T) {
			var f serveFlags
			if err := parseLayered(newServeFlags(&f, io.Discard), []string{"--config", p, "--name", "n"}, mapEnv(nil)); err != nil {
				t.Fatal(err)
			}
			if w := want[name]; w == nil || !w(f) {
				t.Errorf("%s gives %+v", name, f)
			}
			guarded := f.sec.tokenFile != "" || f.sec.cert != ""
			keyed := f.networkKey != "" && f.gossipKey != ""
			f.networkKey, f.gossipKey, f.sec = "", "", apiSecurityFlags{insecure: f.sec.insecure}
			cfg, err := f.config()
			if err != nil {
				t.Fatal(err)
			}
			if err := cfg.Cluster.Validate(); err != nil {
				t.Error(err)
			}
			if guarded {
				cfg.APISecurity.Token = "stand-in"
			}
			if err := f.sec.checkExposed(cfg.APIAddr, cfg.APISecurity); err != nil || f.sec.insecure || f.pprof {
				t.Errorf("serve would refuse it or serve it open: %v (insecure_api %v, pprof %v)", err, f.sec.insecure, f.pprof)
			}
			if keyed {
				cfg.Cluster.NetworkKey, cfg.Cluster.GossipKey = []byte("stand-in"), []byte("stand-in")
			}
			if err := checkCluster(cfg, false); err != nil || f.insecureCluster {
				t.Errorf("serve would refuse its cluster ports or run them open: %v (insecure_cluster %v)", err, f.insecureCluster)
			}
		})
	}
}

// FuzzConfigFile feeds the config decoder arbitrary files. Whatever it
// accepts must have unique keys, and the flag values it yields, written
// back as a JSON object of strings, must decode to the same values: the
// YAML and the JSON spelling of a config agree.
func FuzzConfigFile(f *testing.F) {
	for _, p := range deployConfigs(f) {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{yamlFile, jsonFile, "join: [*a]\n", "memory_limit: 1e9\njoin: [a, &x b, *x]\n",
		"name: a\nname: b\n", "name:\n  x: 1\n", "- a\n", "---\n---\n", `{"listen": "a,b", "memory_limit": 1048576}`,
		`{"name": "\/\ud83d\ude00\\\/", "data_dir": "\u0041\t"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkJSONCompatible(t, b)
		vals, ok := fuzzValues(t, b)
		if !ok {
			return
		}
		js, err := json.Marshal(vals)
		if err != nil {
			t.Fatal(err)
		}
		again, ok := fuzzValues(t, js)
		if !ok || !maps.Equal(again, vals) {
			t.Errorf("%q gives %q; as JSON %s it gives %q", b, vals, js, again)
		}
	})
}

// checkJSONCompatible checks a JSON object of strings (as encoding/json
// reads it) decodes, without duplicate keys, to the same strings. Invalid
// UTF-8 is out: encoding/json replaces it, YAML refuses the file.
func checkJSONCompatible(t *testing.T, b []byte) {
	var obj map[string]string
	if !utf8.Valid(b) || json.Unmarshal(b, &obj) != nil || obj == nil {
		return
	}
	entries, err := decodeConfig(b)
	if err != nil {
		if !strings.Contains(err.Error(), "given twice") {
			t.Fatalf("JSON %q: %v", b, err)
		}
		return
	}
	for _, e := range entries {
		if !isString(e.value) || e.value.Value != obj[e.key] {
			t.Errorf("JSON %q: key %q is %q, encoding/json reads %q", b, e.key, e.value.Value, obj[e.key])
		}
	}
}

// fuzzValues decodes b and returns the flag text of each known key whose
// value is of the right type; false if b does not decode.
func fuzzValues(t *testing.T, b []byte) (map[string]string, bool) {
	entries, err := decodeConfig(b)
	if err != nil {
		return nil, false
	}
	var sf serveFlags
	byKey := flagsByKey(newServeFlags(&sf, io.Discard))
	vals := map[string]string{}
	for _, e := range entries {
		if _, dup := vals[e.key]; dup {
			t.Fatalf("%q: key %q accepted twice", b, e.key)
		}
		if fl := byKey[e.key]; fl != nil {
			if s, err := flagValue(fl, e.value); err == nil {
				vals[e.key] = s
			}
		}
	}
	return vals, true
}

// TestDeployFilesUseRealFlags scans the Dockerfile, the manifests and the
// systemd unit for serve flags and SHUFFLENODE_ variables, and checks each
// exists: a renamed flag must not leave deploy/ stale. (The config files,
// the ConfigMap's included, are decoded by TestDeployConfigs.)
func TestDeployFilesUseRealFlags(t *testing.T) {
	var f serveFlags
	fs := newServeFlags(&f, io.Discard)
	files := []string{"Dockerfile", "shufflenode.service", "k8s/daemonset.yaml", "k8s/sidecar.yaml"}
	flagRe := regexp.MustCompile(`(?:^|[\s"'\[])--([a-z][a-z-]*)`)
	envRe := regexp.MustCompile(`SHUFFLENODE_[A-Z_]+`)
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
	}
}

// TestManifestArgs takes the serve arguments of each Kubernetes manifest
// (lines "- --flag=value"), substitutes the downward-API variables, and
// checks they give a valid cluster config that binds every port on all
// addresses and advertises the pod IP (--advertise), which the others and
// the clients then dial with the bound ports.
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
			if cfg.Cluster.Advertise != "10.1.2.3" || cfg.APIAddr != "0.0.0.0:7947" || cfg.Cluster.GossipAddr != "0.0.0.0:7946" ||
				!slices.Equal(cfg.Cluster.ListenAddrs, []string{"/ip4/0.0.0.0/tcp/7949"}) || len(cfg.Cluster.Join) != 1 {
				t.Errorf("args %q give %+v", args, cfg)
			}
		})
	}
}
