package api

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow/flight"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/simnet"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// testCA is a self-signed CA made for one test, which signs leaf
// certificates written as PEM files under dir.
type testCA struct {
	t    *testing.T
	dir  string
	name string
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	file string // the CA certificate as PEM
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	ca := &testCA{t: t, dir: t.TempDir(), name: name, cert: cert, key: key}
	ca.file = ca.write(name+"-ca.pem", "CERTIFICATE", der)
	return ca
}

// leaf returns the files of a new certificate and key signed by ca, for
// 127.0.0.1 and usable by servers and clients.
func (ca *testCA) leaf(name string) (certFile, keyFile string) {
	ca.t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		ca.t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		ca.t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		ca.t.Fatal(err)
	}
	return ca.write(name+".pem", "CERTIFICATE", der), ca.write(name+"-key.pem", "EC PRIVATE KEY", kb)
}

func (ca *testCA) write(name, typ string, der []byte) string {
	p := filepath.Join(ca.dir, name)
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		ca.t.Fatal(err)
	}
	return p
}

// startSecure serves the API of a service without a cluster on 127.0.0.1
// with sec.
func startSecure(t *testing.T, sec Security) string {
	t.Helper()
	svc, err := service.New(service.Config{})
	if err != nil {
		t.Fatal(err)
	}
	nw, err := simnet.New(simnet.Config{})
	if err != nil {
		t.Fatal(err)
	}
	sn, err := nw.Add("n1", svc.Handle)
	if err != nil {
		t.Fatal(err)
	}
	svc.Attach(sn)
	srv, err := ListenSecure("127.0.0.1:0", svc, nil, sec)
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(func() { srv.Close(); svc.Close(); nw.Close() })
	return srv.Addr()
}

// call asks for the status of an unknown shuffle with auth: an admitted
// call fails with NotFound; the code of the call is returned.
func call(t *testing.T, addr string, a flightproto.ClientAuth) (codes.Code, error) {
	t.Helper()
	c, err := flightproto.DialAuth(addr, a)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	body, _ := json.Marshal(flightproto.ShuffleRef{Shuffle: "nope"})
	stream, err := c.DoAction(ctx, &flight.Action{Type: flightproto.ActionStatus, Body: body})
	if err == nil {
		_, err = stream.Recv()
	}
	if err == io.EOF {
		err = nil
	}
	return status.Code(err), err
}

func TestAPISecurity(t *testing.T) {
	ca, other := newTestCA(t, "cluster"), newTestCA(t, "other")
	srvCert, srvKey := ca.leaf("server")
	cliCert, cliKey := ca.leaf("client")
	strangerCert, strangerKey := other.leaf("stranger")
	tlsOnly := startSecure(t, Security{CertFile: srvCert, KeyFile: srvKey})
	mutual := startSecure(t, Security{CertFile: srvCert, KeyFile: srvKey, ClientCAFile: ca.file})
	token := startSecure(t, Security{Token: "s3cret"})
	both := startSecure(t, Security{CertFile: srvCert, KeyFile: srvKey, Token: "s3cret"})
	admitted := codes.NotFound // the shuffle is unknown: the call got through
	for _, tc := range []struct {
		name    string
		addr    string
		auth    flightproto.ClientAuth
		want    codes.Code
		mention string
	}{
		{"TLS", tlsOnly, flightproto.ClientAuth{CAFile: ca.file}, admitted, ""},
		{"TLS, wrong CA", tlsOnly, flightproto.ClientAuth{CAFile: other.file}, codes.Unavailable, "certificate"},
		{"TLS server, plaintext client", tlsOnly, flightproto.ClientAuth{}, codes.Unavailable, ""},
		{"mutual TLS", mutual, flightproto.ClientAuth{CAFile: ca.file, CertFile: cliCert, KeyFile: cliKey}, admitted, ""},
		{"mutual TLS without a client certificate", mutual, flightproto.ClientAuth{CAFile: ca.file}, codes.Unavailable, ""},
		{"mutual TLS, certificate of another CA", mutual, flightproto.ClientAuth{CAFile: ca.file, CertFile: strangerCert, KeyFile: strangerKey}, codes.Unavailable, ""},
		{"token", token, flightproto.ClientAuth{Token: "s3cret"}, admitted, ""},
		{"token missing", token, flightproto.ClientAuth{}, codes.Unauthenticated, "missing bearer token"},
		{"token wrong", token, flightproto.ClientAuth{Token: "guess"}, codes.Unauthenticated, "wrong bearer token"},
		{"TLS and token", both, flightproto.ClientAuth{CAFile: ca.file, Token: "s3cret"}, admitted, ""},
		{"TLS, token missing", both, flightproto.ClientAuth{CAFile: ca.file}, codes.Unauthenticated, "missing bearer token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := call(t, tc.addr, tc.auth)
			if got != tc.want || !strings.Contains(status.Convert(err).Message(), tc.mention) {
				t.Fatalf("call: %v (%v), want %v mentioning %q", got, err, tc.want, tc.mention)
			}
		})
	}
}

// TestTokenGuardsStreams checks a stream call (DoGet) is refused without
// the token as a unary-style action is.
func TestTokenGuardsStreams(t *testing.T) {
	addr := startSecure(t, Security{Token: "s3cret"})
	for _, tc := range []struct {
		name string
		auth flightproto.ClientAuth
		want codes.Code
	}{
		{"no token", flightproto.ClientAuth{}, codes.Unauthenticated},
		{"token", flightproto.ClientAuth{Token: "s3cret"}, codes.NotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := flightproto.DialAuth(addr, tc.auth)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			tk, _ := json.Marshal(flightproto.Ticket{Shuffle: "nope"})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			s, err := c.DoGet(ctx, &flight.Ticket{Ticket: tk})
			if err == nil {
				_, err = s.Recv()
			}
			if status.Code(err) != tc.want {
				t.Fatalf("DoGet: %v, want %v", err, tc.want)
			}
		})
	}
}

func TestSecurityValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		sec  Security
	}{
		{"certificate without key", Security{CertFile: "c.pem"}},
		{"key without certificate", Security{KeyFile: "k.pem"}},
		{"client CA without TLS", Security{ClientCAFile: "ca.pem"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ListenSecure("127.0.0.1:0", nil, nil, tc.sec); err == nil || !strings.Contains(err.Error(), "invalid API security") {
				t.Fatalf("ListenSecure: %v, want ErrSecurity", err)
			}
		})
	}
}

func TestExposed(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:7947": false, "[::1]:7947": false, "localhost:7947": false, "127.0.0.2:1": false,
		"0.0.0.0:7947": true, ":7947": true, "10.0.0.5:7947": true, "[::]:7947": true, "node-1.example:7947": true,
	} {
		if got := Exposed(addr); got != want {
			t.Errorf("Exposed(%q) = %v, want %v", addr, got, want)
		}
	}
}
