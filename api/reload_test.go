package api

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/api/apitest"
	"github.com/shufflenode/shufflenode/flightproto"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// replaceFile replaces dst with data as a secret volume or a rotation
// script does: written beside it, then renamed over it.
func replaceFile(t *testing.T, dst string, data []byte) {
	t.Helper()
	tmp := dst + ".new"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		t.Fatal(err)
	}
}

// replaceWith replaces dst with the contents of src.
func replaceWith(t *testing.T, dst, src string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	replaceFile(t, dst, b)
}

// expectCall checks that a call with a ends with code, mentioning mention.
func expectCall(t *testing.T, addr string, a flightproto.ClientAuth, code codes.Code, mention, when string) {
	t.Helper()
	got, err := call(t, addr, a)
	if got != code || !strings.Contains(status.Convert(err).Message(), mention) {
		t.Fatalf("%s: call %v (%v), want %v mentioning %q", when, got, err, code, mention)
	}
}

// eventually retries a call with a until it ends with code, for up to 10
// reload intervals.
func eventually(t *testing.T, addr string, a flightproto.ClientAuth, code codes.Code, when string) {
	t.Helper()
	deadline := time.Now().Add(10 * reloadEvery)
	for {
		got, err := call(t, addr, a)
		if got == code {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: call %v (%v) after %v, want %v", when, got, err, 10*reloadEvery, code)
		}
		time.Sleep(reloadEvery / 4)
	}
}

// settle waits past the next reload check, so a change made before it
// has been looked at.
func settle() { time.Sleep(reloadEvery + reloadEvery/4) }

// TestRotateCertificate: the node's certificate and key files, replaced
// while it serves, are in use for new connections without a restart; a
// certificate whose key has not been replaced yet (a rotation half done)
// does not load, and the old pair stays in use until the key follows.
func TestRotateCertificate(t *testing.T) {
	old, next := apitest.NewCA(t, "old"), apitest.NewCA(t, "next")
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	oldCert, oldKey := old.Leaf("server")
	replaceWith(t, cert, oldCert)
	replaceWith(t, key, oldKey)
	addr := startSecure(t, Security{CertFile: cert, KeyFile: key})
	admitted := codes.NotFound
	expectCall(t, addr, flightproto.ClientAuth{CAFile: old.File}, admitted, "", "before the rotation")

	nextCert, nextKey := next.Leaf("server")
	replaceWith(t, cert, nextCert)
	settle()
	expectCall(t, addr, flightproto.ClientAuth{CAFile: old.File}, admitted, "", "new certificate, old key")

	replaceWith(t, key, nextKey)
	eventually(t, addr, flightproto.ClientAuth{CAFile: next.File}, admitted, "after the rotation")
	expectCall(t, addr, flightproto.ClientAuth{CAFile: old.File}, codes.Unavailable, "certificate", "old CA after the rotation")
}

// TestRotateClientCA: a replaced client CA file admits the new CA's
// clients and refuses the old one's, without a restart.
func TestRotateClientCA(t *testing.T) {
	server, old, next := apitest.NewCA(t, "server"), apitest.NewCA(t, "old"), apitest.NewCA(t, "next")
	srvCert, srvKey := server.Leaf("server")
	caFile := filepath.Join(t.TempDir(), "client-ca.crt")
	replaceWith(t, caFile, old.File)
	addr := startSecure(t, Security{CertFile: srvCert, KeyFile: srvKey, ClientCAFile: caFile})
	oldCert, oldKey := old.Leaf("client")
	nextCert, nextKey := next.Leaf("client")
	oldClient := flightproto.ClientAuth{CAFile: server.File, CertFile: oldCert, KeyFile: oldKey}
	nextClient := flightproto.ClientAuth{CAFile: server.File, CertFile: nextCert, KeyFile: nextKey}
	admitted := codes.NotFound
	expectCall(t, addr, oldClient, admitted, "", "before the rotation")
	expectCall(t, addr, nextClient, codes.Unavailable, "", "the next CA's client before the rotation")

	replaceWith(t, caFile, next.File)
	eventually(t, addr, nextClient, admitted, "the next CA's client after the rotation")
	expectCall(t, addr, oldClient, codes.Unavailable, "", "the old CA's client after the rotation")
}

// TestRotateToken: a token file is read again when it changes, without a
// restart: listing the new token under the old admits both while clients
// switch; then the new one alone refuses the old. An emptied file (a
// rotation half written) keeps the tokens in use.
func TestRotateToken(t *testing.T) {
	file := filepath.Join(t.TempDir(), "token")
	replaceFile(t, file, []byte("first\n"))
	addr := startSecure(t, Security{TokenFile: file})
	admitted := codes.NotFound
	first, second := flightproto.ClientAuth{Token: "first"}, flightproto.ClientAuth{Token: "second"}
	expectCall(t, addr, first, admitted, "", "before the rotation")
	expectCall(t, addr, second, codes.Unauthenticated, "wrong bearer token", "the next token before the rotation")

	replaceFile(t, file, nil)
	settle()
	expectCall(t, addr, first, admitted, "", "emptied token file")

	replaceFile(t, file, []byte("first\n\n  second  \n"))
	eventually(t, addr, second, admitted, "both tokens listed")
	expectCall(t, addr, first, admitted, "", "the old token while both are listed")

	replaceFile(t, file, []byte("second\n"))
	eventually(t, addr, first, codes.Unauthenticated, "the old token removed")
	expectCall(t, addr, second, admitted, "", "the new token alone")
}

// TestTokenAndTokenFile: a token and a token file together are refused.
func TestTokenAndTokenFile(t *testing.T) {
	err := Security{Token: "a", TokenFile: "b"}.Validate()
	if err == nil || !strings.Contains(err.Error(), "give one") {
		t.Fatalf("Validate: %v, want a refusal", err)
	}
}
