package api

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/shufflenode/shufflenode/api/apitest"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/simnet"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

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

// dialFor dials addr with a; the client and the 10 s context it returns
// end with the test.
func dialFor(t *testing.T, addr string, a flightproto.ClientAuth) (flight.Client, context.Context) {
	t.Helper()
	c, err := flightproto.DialAuth(addr, a)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(func() { cancel(); c.Close() })
	return c, ctx
}

// call asks for the status of an unknown shuffle with auth: an admitted
// call fails with NotFound; the code of the call is returned.
func call(t *testing.T, addr string, a flightproto.ClientAuth) (codes.Code, error) {
	t.Helper()
	c, ctx := dialFor(t, addr, a)
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
	ca, other := apitest.NewCA(t, "cluster"), apitest.NewCA(t, "other")
	srvCert, srvKey := ca.Leaf("server")
	cliCert, cliKey := ca.Leaf("client")
	strangerCert, strangerKey := other.Leaf("stranger")
	tlsOnly := startSecure(t, Security{CertFile: srvCert, KeyFile: srvKey})
	mutual := startSecure(t, Security{CertFile: srvCert, KeyFile: srvKey, ClientCAFile: ca.File})
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
		{"TLS", tlsOnly, flightproto.ClientAuth{CAFile: ca.File}, admitted, ""},
		{"TLS, wrong CA", tlsOnly, flightproto.ClientAuth{CAFile: other.File}, codes.Unavailable, "certificate"},
		{"TLS server, plaintext client", tlsOnly, flightproto.ClientAuth{}, codes.Unavailable, ""},
		{"mutual TLS", mutual, flightproto.ClientAuth{CAFile: ca.File, CertFile: cliCert, KeyFile: cliKey}, admitted, ""},
		{"mutual TLS without a client certificate", mutual, flightproto.ClientAuth{CAFile: ca.File}, codes.Unavailable, ""},
		{"mutual TLS, certificate of another CA", mutual, flightproto.ClientAuth{CAFile: ca.File, CertFile: strangerCert, KeyFile: strangerKey}, codes.Unavailable, ""},
		{"token", token, flightproto.ClientAuth{Token: "s3cret"}, admitted, ""},
		{"token missing", token, flightproto.ClientAuth{}, codes.Unauthenticated, "missing bearer token"},
		{"token wrong", token, flightproto.ClientAuth{Token: "guess"}, codes.Unauthenticated, "wrong bearer token"},
		{"TLS and token", both, flightproto.ClientAuth{CAFile: ca.File, Token: "s3cret"}, admitted, ""},
		{"TLS, token missing", both, flightproto.ClientAuth{CAFile: ca.File}, codes.Unauthenticated, "missing bearer token"},
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

// TestHandshakeChecksToken: on a node with a token, Handshake without it
// or with a wrong one fails with Unauthenticated; with it, the reply says
// the node requires a bearer token. A node without a token says nothing.
func TestHandshakeChecksToken(t *testing.T) {
	guarded, open := startSecure(t, Security{Token: "s3cret"}), startSecure(t, Security{})
	for _, tc := range []struct {
		name, addr, token, wantAuth string
		want                        codes.Code
	}{
		{"no token", guarded, "", "", codes.Unauthenticated},
		{"wrong token", guarded, "guess", "", codes.Unauthenticated},
		{"token", guarded, "s3cret", flightproto.AuthBearer, codes.OK},
		{"open node", open, "", "", codes.OK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reply, err := handshake(t, tc.addr, flightproto.ClientAuth{Token: tc.token})
			if status.Code(err) != tc.want || reply.Auth != tc.wantAuth {
				t.Fatalf("handshake: %+v, %v; want %v and auth %q", reply, err, tc.want, tc.wantAuth)
			}
		})
	}
}

// handshake runs a Handshake with a, sending no request, and decodes the
// reply's payload.
func handshake(t *testing.T, addr string, a flightproto.ClientAuth) (flightproto.HandshakeReply, error) {
	t.Helper()
	var reply flightproto.HandshakeReply
	c, ctx := dialFor(t, addr, a)
	stream, err := c.Handshake(ctx)
	if err != nil {
		return reply, err
	}
	_ = stream.CloseSend()
	r, err := stream.Recv()
	if err != nil {
		return reply, err
	}
	return reply, json.Unmarshal(r.Payload, &reply)
}
