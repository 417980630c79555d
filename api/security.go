package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"strings"

	"github.com/shufflenode/shufflenode/flightproto"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
)

// Security is who may call a node's API. The zero value lets in every
// caller in plaintext: only for a loopback address (see Exposed).
type Security struct {
	// CertFile and KeyFile, a PEM certificate and its key, turn TLS on.
	CertFile, KeyFile string
	// ClientCAFile, with TLS, requires every client to show a certificate
	// signed by one of its PEM CAs (mutual TLS).
	ClientCAFile string
	// Token, if set, must come with every call as "authorization: Bearer
	// <token>" (flightproto.ClientAuth.Token); calls without it fail with
	// codes.Unauthenticated.
	Token string
	// TokenFile, instead of Token, names a file of tokens, one per line
	// (flightproto.ReadTokens): calls may carry any of them, so a token
	// can be rotated without refused calls.
	//
	// The node reads this file, CertFile, KeyFile and ClientCAFile again
	// when they change (looking at most once a second), so they can be
	// rotated without a restart: new connections get the new certificate and
	// CAs, and calls are checked against the new token. A changed file that
	// does not load (a rotation half written) leaves the last good one in
	// use until it does.
	TokenFile string
	// OutputRoots are the directories under which callers may have the node
	// write an op's result (flightproto.OpTicket.Write). Each must be an
	// absolute path to a directory. None: the node writes no files for
	// callers and refuses such ops with PermissionDenied.
	OutputRoots []string
	// InputRoots are the directories under which callers may have the node
	// read a put's input file (flightproto.PutCmd.File). Each must be an
	// absolute path to a directory. None: the node reads no files for
	// callers and refuses such puts with PermissionDenied.
	InputRoots []string
	// Limits bound the connections and calls of every caller (zero value:
	// the defaults).
	Limits Limits
	// PoisonReleased makes the server overwrite each received message's
	// buffer when it goes back to the server's pool, so that a reader that
	// keeps a record past its release sees garbage at once instead of a
	// later message's bytes (flightproto.PoolConfig). For tests: it costs a
	// write of every received byte.
	PoisonReleased bool
}

// TLS reports whether the API is served over TLS.
func (s Security) TLS() bool { return s.CertFile != "" }

// HasToken reports whether callers must show a bearer token.
func (s Security) HasToken() bool { return s.Token != "" || s.TokenFile != "" }

// Guarded reports whether callers must prove something: a token or a
// client certificate.
func (s Security) Guarded() bool { return s.HasToken() || (s.TLS() && s.ClientCAFile != "") }

// authScheme is the Handshake's word for what a caller must show:
// "bearer" when the node has a token, else "".
func (s Security) authScheme() string {
	if s.HasToken() {
		return flightproto.AuthBearer
	}
	return ""
}

// Validate reports settings that cannot work, wrapping ErrSecurity.
func (s Security) Validate() error {
	switch {
	case (s.CertFile == "") != (s.KeyFile == ""):
		return fmt.Errorf("%w: TLS needs both a certificate and a key file", ErrSecurity)
	case s.ClientCAFile != "" && !s.TLS():
		return fmt.Errorf("%w: a client CA file (mutual TLS) needs a certificate and key", ErrSecurity)
	case s.Token != "" && s.TokenFile != "":
		return fmt.Errorf("%w: a token and a token file: give one", ErrSecurity)
	}
	return nil
}

// serverOptions are the gRPC options that enforce s; log gets what the
// reloading of its files has to say.
func (s Security) serverOptions(log *slog.Logger) ([]grpc.ServerOption, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	opts := s.Limits.serverOptions()
	if s.TLS() {
		cfg, err := s.tlsConfig(log)
		if err != nil {
			return nil, err
		}
		opts = append(opts, grpc.Creds(scanCreds{TransportCredentials: credentials.NewTLS(cfg), limit: uint32(s.Limits.withDefaults().MaxCallMessage)}))
	}
	if s.HasToken() {
		g, err := s.tokenGuard(log)
		if err != nil {
			return nil, err
		}
		opts = append(opts, grpc.InTapHandle(g.tap))
	}
	return opts, nil
}

// tlsConfig is the server TLS configuration of s: its certificate, and
// with a client CA file its CAs, reloaded when their files change.
func (s Security) tlsConfig(log *slog.Logger) (*tls.Config, error) {
	cert, err := newReloading("certificate", log, func() (*tls.Certificate, error) {
		c, err := tls.LoadX509KeyPair(s.CertFile, s.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("%w: certificate %s: %w", ErrSecurity, s.CertFile, err)
		}
		return &c, nil
	}, s.CertFile, s.KeyFile)
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return cert.get(), nil }}
	if s.ClientCAFile == "" {
		return cfg, nil
	}
	cas, err := newReloading("client CA", log, func() (*x509.CertPool, error) {
		p, err := flightproto.LoadCertPool(s.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrSecurity, err)
		}
		return p, nil
	}, s.ClientCAFile)
	if err != nil {
		return nil, err
	}
	cfg.ClientAuth = tls.RequireAndVerifyClientCert
	base := cfg.Clone()
	cfg.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		c := base.Clone()
		c.ClientCAs = cas.get()
		return c, nil
	}
	return cfg, nil
}

// tokenGuard returns the guard of s's token, or of the tokens of
// TokenFile, read again when that changes.
func (s Security) tokenGuard(log *slog.Logger) (tokenGuard, error) {
	if s.TokenFile == "" {
		sums := [][sha256.Size]byte{sha256.Sum256([]byte(s.Token))}
		return tokenGuard{sums: func() [][sha256.Size]byte { return sums }}, nil
	}
	toks, err := newReloading("token", log, func() ([][sha256.Size]byte, error) {
		ts, err := flightproto.ReadTokens(s.TokenFile)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrSecurity, err)
		}
		sums := make([][sha256.Size]byte, len(ts))
		for i, t := range ts {
			sums[i] = sha256.Sum256([]byte(t))
		}
		return sums, nil
	}, s.TokenFile)
	if err != nil {
		return tokenGuard{}, err
	}
	return tokenGuard{sums: toks.get}, nil
}

// tokenGuard checks the bearer token of every call against the SHA-256 of
// each of the node's current tokens (comparing digests in constant time,
// every one of them, hides the token's length and bytes, and which token
// matched).
type tokenGuard struct{ sums func() [][sha256.Size]byte }

// tap checks the token when a call's headers arrive, before gRPC reads
// (and buffers) any of its messages: a call without the token costs the
// node its headers only, whatever the size of the message it announces.
func (g tokenGuard) tap(ctx context.Context, _ *tap.Info) (context.Context, error) {
	return ctx, g.check(ctx)
}

// check returns nil if the call's metadata holds the token, else an
// Unauthenticated status saying what is missing or wrong.
func (g tokenGuard) check(ctx context.Context) error {
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get(flightproto.AuthHeader)
	if len(vals) == 0 {
		return status.Error(codes.Unauthenticated, `api: missing bearer token: this node requires metadata "authorization: Bearer <token>"`)
	}
	tok, ok := strings.CutPrefix(vals[0], flightproto.BearerPrefix)
	if !ok {
		return status.Error(codes.Unauthenticated, `api: the authorization metadata is not "Bearer <token>"`)
	}
	sum, match := sha256.Sum256([]byte(tok)), 0
	for _, want := range g.sums() {
		match |= subtle.ConstantTimeCompare(sum[:], want[:])
	}
	if match != 1 {
		return status.Error(codes.Unauthenticated, "api: wrong bearer token")
	}
	return nil
}

// Exposed reports whether addr (host:port) may be reached from other
// hosts: any address but a loopback IP or "localhost". An empty host
// means every interface.
func Exposed(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	if strings.EqualFold(host, "localhost") {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}
