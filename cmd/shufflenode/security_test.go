package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shufflenode/shufflenode/api"
	"github.com/shufflenode/shufflenode/api/apitest"
	"github.com/shufflenode/shufflenode/dht"
	"github.com/shufflenode/shufflenode/node"
	"github.com/shufflenode/shufflenode/service"
)

// TestServeRefusesOpenExposedAPI: a non-loopback API address needs TLS, a
// token or --insecure-api; loopback needs nothing.
func TestServeRefusesOpenExposedAPI(t *testing.T) {
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		args    []string
		refused bool
	}{
		{"loopback", []string{"--api", "127.0.0.1:7947"}, false},
		{"all interfaces", []string{"--api", "0.0.0.0:7947"}, true},
		{"private address", []string{"--api", "10.0.0.5:7947"}, true},
		{"token", []string{"--api", "0.0.0.0:7947", "--api-token-file", token}, false},
		{"insecure-api", []string{"--api", "0.0.0.0:7947", "--insecure-api"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f serveFlags
			if err := parseLayered(newServeFlags(&f, io.Discard), tc.args, mapEnv(nil)); err != nil {
				t.Fatal(err)
			}
			cfg, err := f.config()
			if err != nil {
				t.Fatal(err)
			}
			err = f.sec.checkExposed(cfg.APIAddr, cfg.APISecurity)
			if refused := err != nil; refused != tc.refused {
				t.Fatalf("checkExposed: %v, want refused %v", err, tc.refused)
			}
			if err != nil && !strings.Contains(err.Error(), "--insecure-api") {
				t.Errorf("refusal does not name --insecure-api: %v", err)
			}
			if sec := cfg.APISecurity; tc.name == "token" && (sec.TokenFile != token || sec.Token != "") {
				t.Errorf("token %q, token file %q: want the file, which the node reads again when it changes", sec.Token, sec.TokenFile)
			}
		})
	}
}

// TestServeSwitchesAndCounts: config keys of switches take YAML booleans
// and those of counts YAML numbers; the environment sets both.
func TestServeSwitchesAndCounts(t *testing.T) {
	f, _, err := layered(t, "pprof: true\ninsecure_api: false\nmax_shuffles: 10\nmax_partitions: 0x100\n",
		map[string]string{"SHUFFLENODE_MAX_TASKS": "99"})
	if err != nil {
		t.Fatal(err)
	}
	if !f.pprof || f.sec.insecure || f.limits.shuffles != 10 || f.limits.partitions != 256 || f.limits.tasks != 99 {
		t.Fatalf("got pprof %v insecure %v limits %+v", f.pprof, f.sec.insecure, f.limits)
	}
	for _, bad := range []string{"pprof: 1\n", "max_tasks: true\n", "max_tasks: 1.5\n"} {
		if _, _, err := layered(t, bad, nil); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestClientAuthFromEnv: a job's API flags come from SHUFFLENODE_API_*
// when not given, and the command line wins.
func TestClientAuthFromEnv(t *testing.T) {
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("tok"), 0o600); err != nil {
		t.Fatal(err)
	}
	var f shuffleFlags
	fs := newFlags("shuffle", io.Discard)
	f.register(fs)
	if err := fs.Parse([]string{"--api-server-name", "flag.example"}); err != nil {
		t.Fatal(err)
	}
	a, err := f.auth.auth(mapEnv(map[string]string{"SHUFFLENODE_API_TOKEN_FILE": token,
		"SHUFFLENODE_API_CA": "/ca.pem", "SHUFFLENODE_API_SERVER_NAME": "env.example"}))
	if err != nil {
		t.Fatal(err)
	}
	if a.Token != "tok" || a.CAFile != "/ca.pem" || a.ServerName != "flag.example" {
		t.Fatalf("auth %+v", a)
	}
}

// TestCLIWithTLSAndToken runs a node whose API wants TLS and a token, and
// calls it with status and a demo: they work with --api-ca and
// --api-token-file, and are refused without either.
func TestCLIWithTLSAndToken(t *testing.T) {
	ca := apitest.NewCA(t, "cluster")
	cert, key := ca.Leaf("node")
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("tok\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	n, err := node.Start(context.Background(), node.Config{Logger: quiet,
		APISecurity: api.Security{CertFile: cert, KeyFile: key, Token: "tok"},
		Cluster:     dht.Config{Name: "n0", DataDir: t.TempDir(), Profile: dht.ProfileLocal, Logger: quiet},
		Service:     service.Config{MemoryLimit: 64 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	secure := []string{"--api-ca", ca.File, "--api-token-file", token}
	for _, tc := range []struct {
		name    string
		cmd     func(args []string, stdout, stderr io.Writer) int
		args    []string
		code    int
		mention string
	}{
		{"status", cmdStatus, append([]string{"--node", n.APIAddr()}, secure...), 0, `"n0"`},
		{"status without token", cmdStatus, []string{"--node", n.APIAddr(), "--api-ca", ca.File}, 1, "missing bearer token"},
		{"status without TLS", cmdStatus, []string{"--node", n.APIAddr(), "--api-token-file", token}, 1, "Unavailable"},
		{"demo", cmdDemo, append([]string{"--cluster", n.APIAddr(), "--data", "200KiB", "--tasks", "4", "--partitions", "3"}, secure...), 0, "verified"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut strings.Builder
			code := tc.cmd(tc.args, &out, &errOut)
			if code != tc.code || !strings.Contains(out.String()+errOut.String(), tc.mention) {
				t.Fatalf("exit %d, want %d mentioning %q\nstdout: %s\nstderr: %s", code, tc.code, tc.mention, out.String(), errOut.String())
			}
		})
	}
}
