package main

// Flags of the Flight API's security: serve's TLS, client CA, token and
// --insecure-api, and the matching flags of every command that calls a
// running node (jobs with --cluster, status, layout).

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/shufflenode/shufflenode/api"
	"github.com/shufflenode/shufflenode/client"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/job"
	"github.com/shufflenode/shufflenode/node"
	"github.com/shufflenode/shufflenode/service"
)

// apiSecurityFlags are serve's flags of the API's TLS and token.
type apiSecurityFlags struct {
	cert, key, clientCA, tokenFile string
	insecure                       bool
	callMessage, conns             int
	streams                        uint
}

func (f *apiSecurityFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.cert, "api-cert", "", "PEM certificate of the client API: turns TLS on (with --api-key)")
	fs.StringVar(&f.key, "api-key", "", "PEM private key of --api-cert")
	fs.StringVar(&f.clientCA, "api-client-ca", "", "PEM CA certificates: clients must show a certificate they signed (mutual TLS)")
	fs.StringVar(&f.tokenFile, "api-token-file", "", `file of bearer tokens, one per line: every client call must carry one of them ("authorization: Bearer <token>"); read again when it changes`)
	fs.BoolVar(&f.insecure, "insecure-api", false, "allow a non-loopback --api address with neither TLS nor a token")
	fs.IntVar(&f.callMessage, "max-call-message", api.DefaultMaxCallMessage, "largest message, in bytes, of every API call but DoPut and DoExchange (record batches, up to 256 MiB): a larger one is refused unread (ResourceExhausted)")
	fs.IntVar(&f.conns, "max-api-connections", api.DefaultMaxConnections, "client API connections served at once; more wait to be accepted")
	fs.UintVar(&f.streams, "max-api-streams", api.DefaultMaxStreams, "calls one client API connection may run at once; clients queue the rest")
}

// security checks the token file and returns the API's security.
func (f *apiSecurityFlags) security() (api.Security, error) {
	sec := api.Security{CertFile: f.cert, KeyFile: f.key, ClientCAFile: f.clientCA,
		Limits: api.Limits{MaxCallMessage: f.callMessage, MaxConnections: f.conns, MaxStreams: uint32(min(f.streams, 1<<31))}}
	if f.tokenFile != "" {
		// read now for a clear error at start; the node reads it again
		// whenever it changes (api.Security.TokenFile)
		if _, err := flightproto.ReadTokens(f.tokenFile); err != nil {
			return sec, fmt.Errorf("--api-token-file: %w", err)
		}
		sec.TokenFile = f.tokenFile
	}
	if err := sec.Validate(); err != nil {
		return sec, fmt.Errorf("--api-cert, --api-key, --api-client-ca: %w", err)
	}
	return sec, nil
}

// checkExposed refuses an exposed API address (not loopback) with neither
// TLS nor a token, unless --insecure-api.
func (f *apiSecurityFlags) checkExposed(addr string, sec api.Security) error {
	if api.Exposed(addr) && !sec.TLS() && !sec.HasToken() && !f.insecure {
		return fmt.Errorf("refusing to serve the client API on %s, which is not a loopback address, "+
			"with neither TLS (--api-cert and --api-key) nor a token (--api-token-file): "+
			"anyone who reaches it could create, read and close shuffles; give one of them, "+
			"or --insecure-api to serve it open anyway", addr)
	}
	return nil
}

// warnOpenAPI logs when an exposed API lets callers in without TLS: open
// (--insecure-api), or with a token that crosses the network in clear.
func warnOpenAPI(cfg node.Config) {
	sec := cfg.APISecurity
	switch {
	case !api.Exposed(cfg.APIAddr) || sec.TLS():
	case !sec.HasToken():
		cfg.Logger.Warn("the client API is open to anyone who reaches it (--insecure-api)", "api", cfg.APIAddr)
	default:
		cfg.Logger.Warn("the client API's token crosses the network in clear text: add --api-cert and --api-key", "api", cfg.APIAddr)
	}
}

// clientAuthFlags are the flags of a command that calls a running node's
// API. A flag not given on the command line is taken from its environment
// variable (SHUFFLENODE_API_CA for --api-ca...), as serve's are.
type clientAuthFlags struct {
	tls                                  bool
	ca, cert, key, serverName, tokenFile string
	fs                                   *flag.FlagSet
}

// clientAuthNames are the flags of clientAuthFlags.
var clientAuthNames = []string{"api-tls", "api-ca", "api-client-cert", "api-client-key", "api-server-name", "api-token-file"}

func (f *clientAuthFlags) register(fs *flag.FlagSet) {
	f.fs = fs
	fs.BoolVar(&f.tls, "api-tls", false, "call the API over TLS, checking the node against the system's CAs (implied by --api-ca)")
	fs.StringVar(&f.ca, "api-ca", "", "PEM CA certificates to check the node's API certificate against (turns TLS on)")
	fs.StringVar(&f.cert, "api-client-cert", "", "PEM client certificate, for a node that requires one (mutual TLS)")
	fs.StringVar(&f.key, "api-client-key", "", "PEM private key of --api-client-cert")
	fs.StringVar(&f.serverName, "api-server-name", "", "name to check in the node's certificate (default: the host dialed)")
	fs.StringVar(&f.tokenFile, "api-token-file", "", "file holding the bearer token of the cluster's API (its first line)")
}

// auth applies the environment to the flags not given and returns the
// client's TLS settings and token.
func (f *clientAuthFlags) auth(env lookupFunc) (flightproto.ClientAuth, error) {
	if err := f.applyEnv(env); err != nil {
		return flightproto.ClientAuth{}, err
	}
	a := flightproto.ClientAuth{TLS: f.tls, CAFile: f.ca, CertFile: f.cert, KeyFile: f.key, ServerName: f.serverName}
	if (a.CertFile == "") != (a.KeyFile == "") {
		return a, errors.New("--api-client-cert and --api-client-key go together")
	}
	if f.tokenFile != "" {
		t, err := flightproto.ReadToken(f.tokenFile)
		if err != nil {
			return a, fmt.Errorf("--api-token-file: %w", err)
		}
		a.Token = t
	}
	return a, nil
}

// resolve sets c.Auth from the flags and the environment when c is a
// running cluster (an in-process one is plaintext on loopback).
func (f *clientAuthFlags) resolve(c *job.ClusterConfig) error {
	var err error
	if c.Addr != "" {
		c.Auth, err = f.auth(os.LookupEnv)
	}
	return err
}

// dial connects to the node at addr with the flags' TLS settings and token.
func (f *clientAuthFlags) dial(addr string) (*client.Client, error) {
	a, err := f.auth(os.LookupEnv)
	if err != nil {
		return nil, err
	}
	return client.DialAuth(addr, a)
}

// applyEnv sets each flag not given on the command line from its
// environment variable, if that is set and not empty.
func (f *clientAuthFlags) applyEnv(env lookupFunc) error {
	given := setFlags(f.fs)
	for _, name := range clientAuthNames {
		v := lookupSet(env, envName(name))
		if given[name] || v == "" {
			continue
		}
		if err := f.fs.Set(name, v); err != nil {
			return fmt.Errorf("%w: environment %s=%q: %v", errConfig, envName(name), v, err)
		}
	}
	return nil
}

// given reports whether any of the flags was set (on the command line or
// from the environment).
func (f *clientAuthFlags) given() bool {
	set := setFlags(f.fs)
	for _, name := range clientAuthNames {
		if set[name] {
			return true
		}
	}
	return false
}

// limitFlags are serve's caps on what a client may ask of the node.
type limitFlags struct {
	shuffles, tasks, partitions int
	runs                        int64
}

func (f *limitFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&f.shuffles, "max-shuffles", service.DefaultMaxShuffles, "shuffles this node holds at once; a create past it is refused")
	fs.IntVar(&f.tasks, "max-tasks", service.DefaultMaxTasks, "input tasks of one shuffle; a create asking more is refused")
	fs.IntVar(&f.partitions, "max-partitions", service.DefaultMaxPartitions, "output partitions of one shuffle; a create asking more is refused")
	fs.Int64Var(&f.runs, "max-runs", service.DefaultMaxRuns, "runs an array's distributed axes plan into (a cyclic axis: one per block); a create asking more is refused")
}

// apply sets the caps in c.
func (f *limitFlags) apply(c *service.Config) {
	c.MaxShuffles, c.MaxTasks, c.MaxPartitions, c.MaxRuns = f.shuffles, f.tasks, f.partitions, f.runs
}
