package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"fmt"
	"net"
	"strings"

	"github.com/shufflenode/shufflenode/flightproto"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
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
}

// TLS reports whether the API is served over TLS.
func (s Security) TLS() bool { return s.CertFile != "" }

// Guarded reports whether callers must prove something: a token or a
// client certificate.
func (s Security) Guarded() bool { return s.Token != "" || (s.TLS() && s.ClientCAFile != "") }

// authScheme is the Handshake's word for what a caller must show:
// "bearer" when the node has a token, else "".
func (s Security) authScheme() string {
	if s.Token != "" {
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
	}
	return nil
}

// serverOptions are the gRPC options that enforce s.
func (s Security) serverOptions() ([]grpc.ServerOption, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	var opts []grpc.ServerOption
	if s.TLS() {
		cfg, err := s.tlsConfig()
		if err != nil {
			return nil, err
		}
		opts = append(opts, grpc.Creds(credentials.NewTLS(cfg)))
	}
	if s.Token != "" {
		g := tokenGuard(sha256.Sum256([]byte(s.Token)))
		opts = append(opts, grpc.ChainUnaryInterceptor(g.unary), grpc.ChainStreamInterceptor(g.stream))
	}
	return opts, nil
}

// tlsConfig is the server TLS configuration of s.
func (s Security) tlsConfig() (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(s.CertFile, s.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("%w: certificate %s: %w", ErrSecurity, s.CertFile, err)
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}
	if s.ClientCAFile != "" {
		if cfg.ClientCAs, err = flightproto.LoadCertPool(s.ClientCAFile); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrSecurity, err)
		}
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// tokenGuard checks the bearer token of every call against the SHA-256 of
// the node's token (comparing digests in constant time hides the token's
// length as well as its bytes).
type tokenGuard [sha256.Size]byte

func (g tokenGuard) unary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
	if err := g.check(ctx); err != nil {
		return nil, err
	}
	return next(ctx, req)
}

func (g tokenGuard) stream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, next grpc.StreamHandler) error {
	if err := g.check(ss.Context()); err != nil {
		return err
	}
	return next(srv, ss)
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
	sum := sha256.Sum256([]byte(tok))
	if subtle.ConstantTimeCompare(sum[:], g[:]) != 1 {
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
