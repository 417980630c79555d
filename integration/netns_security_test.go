package integration

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/shufflenode/shufflenode/api/apitest"
	"github.com/shufflenode/shufflenode/client"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/integration/netns"
)

// TestNetnsAPISecurity runs one serve process in its own namespace with
// its API on its non-loopback address behind mutual TLS and a bearer token
// (no --insecure-api), and calls it from the test process, across the
// bridge: with the CA, a client certificate and the token the call works;
// without the token it is refused as Unauthenticated; without the client
// certificate, in clear text, or checking the server against another CA
// it is refused too.
func TestNetnsAPISecurity(t *testing.T) {
	t.Parallel()
	nw := netns.ForTest(t, 1)
	ca := apitest.NewCA(t, "ns-ca")
	cert, key := ca.Leaf("ns-node") // for localhost: clients check that name
	clientCert, clientKey := ca.Leaf("ns-client")
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "api.token")
	if err := os.WriteFile(tokenFile, []byte("ns-secret-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := spawnIn(nw.Hosts[0], shufflenodeBinary(t), dir, "ns-sec", "", nil,
		"--api-cert", cert, "--api-key", key, "--api-client-ca", ca.File, "--api-token-file", tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.kill)
	good := flightproto.ClientAuth{CAFile: ca.File, ServerName: "localhost", CertFile: clientCert, KeyFile: clientKey, Token: "ns-secret-token"}
	if err := waitAuthMembers(p, good, 30*time.Second); err != nil {
		t.Fatalf("with certificate and token: %v (log: %s)", err, tail(p.log, 20))
	}
	noToken, noCert, otherCA := good, good, good
	noToken.Token = ""
	noCert.CertFile, noCert.KeyFile = "", ""
	otherCA.CAFile = apitest.NewCA(t, "other-ca").File
	cases := []struct {
		name string
		auth flightproto.ClientAuth
		code codes.Code // 0: any error
	}{
		{"no token", noToken, codes.Unauthenticated},
		{"no client certificate", noCert, 0},
		{"clear text with token", flightproto.ClientAuth{Token: "ns-secret-token"}, 0},
		{"wrong CA", otherCA, 0},
	}
	for _, c := range cases {
		err := membersWith(p.api, c.auth)
		t.Logf("%s: %v", c.name, err)
		if err == nil || (c.code != 0 && status.Code(err) != c.code) {
			t.Errorf("%s: got %v (code %s), want a refusal %v", c.name, err, status.Code(err), c.code)
		}
	}
}

// membersWith asks the node at addr for its members with a's credentials.
func membersWith(addr string, a flightproto.ClientAuth) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cl, err := client.DialAuth(addr, a)
	if err != nil {
		return err
	}
	defer cl.Close()
	_, err = cl.Members(ctx)
	return err
}

// waitAuthMembers retries membersWith until it works or limit passes.
func waitAuthMembers(p *proc, a flightproto.ClientAuth, limit time.Duration) error {
	var err error
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if err = membersWith(p.api, a); err == nil || !p.alive() {
			return err
		}
	}
	return err
}
