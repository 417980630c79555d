package flightproto

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// AuthHeader is the gRPC metadata key of the bearer token.
const AuthHeader = "authorization"

// BearerPrefix starts the value of AuthHeader.
const BearerPrefix = "Bearer "

// ErrAuthConfig is wrapped by every error in a ClientAuth.
var ErrAuthConfig = errors.New("flightproto: invalid API security settings")

// ClientAuth is how a client checks a node's API and proves itself to it.
// The zero value is plaintext without a token (a node on loopback).
type ClientAuth struct {
	// TLS turns TLS on, checking the server against the system's roots
	// unless CAFile is set. CAFile, CertFile or ServerName turn it on too.
	TLS bool
	// CAFile holds PEM certificates of the CAs to check servers against.
	CAFile string
	// CertFile and KeyFile are a PEM client certificate and its key, for
	// servers that require one (mutual TLS).
	CertFile, KeyFile string
	// ServerName is the name to check in the server's certificate; default
	// the host of the address dialed.
	ServerName string
	// Token, if set, is sent with every call as "authorization: Bearer
	// <token>". Without TLS it crosses the network in clear text.
	Token string
}

// usesTLS reports whether a connection with a is TLS.
func (a ClientAuth) usesTLS() bool {
	return a.TLS || a.CAFile != "" || a.CertFile != "" || a.KeyFile != "" || a.ServerName != ""
}

// dialOptions returns the gRPC options of a's transport and token.
func (a ClientAuth) dialOptions() ([]grpc.DialOption, error) {
	creds := insecure.NewCredentials()
	if a.usesTLS() {
		cfg, err := a.tlsConfig()
		if err != nil {
			return nil, err
		}
		creds = credentials.NewTLS(cfg)
	}
	opts := []grpc.DialOption{grpc.WithTransportCredentials(creds)}
	if a.Token != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(bearer(a.Token)))
	}
	return opts, nil
}

// tlsConfig is the client TLS configuration of a.
func (a ClientAuth) tlsConfig() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: a.ServerName}
	if a.CAFile != "" {
		pool, err := LoadCertPool(a.CAFile)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	if (a.CertFile == "") != (a.KeyFile == "") {
		return nil, fmt.Errorf("%w: a client certificate needs both its certificate and key files", ErrAuthConfig)
	}
	if a.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(a.CertFile, a.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("%w: client certificate %s: %w", ErrAuthConfig, a.CertFile, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// LoadCertPool reads the PEM certificates of path into a pool.
func LoadCertPool(path string) (*x509.CertPool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: CA file: %w", ErrAuthConfig, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%w: CA file %s holds no PEM certificate", ErrAuthConfig, path)
	}
	return pool, nil
}

// ReadToken reads the bearer token a client sends from a file: its first
// token (see ReadTokens).
func ReadToken(path string) (string, error) {
	ts, err := ReadTokens(path)
	if err != nil {
		return "", err
	}
	return ts[0], nil
}

// ReadTokens reads the bearer tokens of a token file: one per line,
// without surrounding white space, empty lines left out; there must be at
// least one. A node accepts every token of its file, so a token is rotated
// without refused calls by listing the new one under the old, moving the
// clients to it, then removing the old.
func ReadTokens(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: token file: %w", ErrAuthConfig, err)
	}
	var ts []string
	for line := range strings.Lines(string(b)) {
		if t := strings.TrimSpace(line); t != "" {
			ts = append(ts, t)
		}
	}
	if len(ts) == 0 {
		return nil, fmt.Errorf("%w: token file %s is empty", ErrAuthConfig, path)
	}
	return ts, nil
}

// bearer sends a token as gRPC per-call credentials.
type bearer string

// GetRequestMetadata returns the authorization header.
func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{AuthHeader: BearerPrefix + string(b)}, nil
}

// RequireTransportSecurity is false: a token may be used over plaintext
// (on loopback, or behind a proxy that terminates TLS).
func (b bearer) RequireTransportSecurity() bool { return false }
