package node

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"slices"

	"github.com/shufflenode/shufflenode/admin"
	"github.com/shufflenode/shufflenode/api"
	"github.com/shufflenode/shufflenode/dht"
	"github.com/shufflenode/shufflenode/record"
	"github.com/shufflenode/shufflenode/service"
)

// Config configures one node.
type Config struct {
	// APIAddr is where the Flight API listens (host:port). Default
	// "127.0.0.1:0".
	APIAddr string
	// AdvertiseAPI, host:port, is the API address the other members are
	// told (and pass on to clients: members, layouts) when it differs from
	// APIAddr (a 0.0.0.0 bind, NAT, pods). Default: Cluster.Advertise
	// with the bound API port if that is set, else the bound address.
	AdvertiseAPI string
	// Cluster configures membership and peer streams. Its Name is the
	// node's name; its DataDir holds the identity key and, under "spill",
	// the spill store (unless Service.SpillDir is set).
	Cluster dht.Config
	// Service configures the shuffle engine.
	Service service.Config
	// APISecurity is the Flight API's TLS and token; the zero value lets
	// every caller in (Start does not refuse an exposed APIAddr: the
	// binary does, see api.Exposed).
	APISecurity api.Security
	// AdminAddr, if set, serves /metrics and /status there (no
	// authentication: keep it on loopback).
	AdminAddr string
	// AdminPprof also serves /debug/pprof on AdminAddr.
	AdminPprof bool
	// Logger for every component; default slog.Default().
	Logger *slog.Logger
}

// Node is one running shufflenode.
type Node struct {
	Cluster *dht.Node
	Service *service.Service
	API     *api.Server
	Admin   *admin.Server // nil without Config.AdminAddr
}

// Name is the node's member name.
func (n *Node) Name() string { return n.Cluster.Self().Name }

// APIAddr is the address of the node's Flight API.
func (n *Node) APIAddr() string { return n.API.Addr() }

// Start runs one node and joins cfg.Cluster.Join.
func Start(ctx context.Context, cfg Config) (*Node, error) {
	nodes, err := startAll(ctx, []Config{cfg})
	if err != nil {
		return nil, err
	}
	return nodes[0], nil
}

// StartLocal runs n nodes in this process, named base.Cluster.Name-<i>
// ("node-<i>"), each with its own data directory under base.Cluster.DataDir,
// all on loopback, and returns once they form one cluster.
func StartLocal(ctx context.Context, n int, base Config) ([]*Node, error) {
	cfgs := make([]Config, n)
	for i, cc := range dht.Configs(n, base.Cluster) {
		cfgs[i] = base
		cfgs[i].Cluster = cc
	}
	return startAll(ctx, cfgs)
}

// startAll starts a service and API per config, then the cluster nodes
// (the first starts the cluster unless it has seeds; the rest join it).
func startAll(ctx context.Context, cfgs []Config) (nodes []*Node, err error) {
	nodes = make([]*Node, len(cfgs))
	defer func() {
		if err != nil {
			closeAll(nodes)
			nodes = nil
		}
	}()
	ccs := make([]dht.Config, len(cfgs))
	for i, c := range cfgs {
		if nodes[i], err = startEngine(c); err != nil {
			return nodes, err
		}
		ccs[i] = c.Cluster
		ccs[i].APIAddr = c.advertisedAPI(nodes[i].API.Addr())
		ccs[i].RecordRules = append(slices.Clone(ccs[i].RecordRules), dht.RecordRule{Prefix: record.Prefix, Rank: record.Rank, Signed: true})
		if ccs[i].MaxInboundBytes == 0 {
			ccs[i].MaxInboundBytes = c.Service.InboundBytes()
		}
		if ccs[i].Logger == nil {
			ccs[i].Logger = c.Logger
		}
	}
	cluster, err := dht.StartNodes(ctx, ccs, func(i int) dht.Handler { return nodes[i].Service.Handle })
	if err != nil {
		return nodes, fmt.Errorf("node: starting the cluster: %w", err)
	}
	for i, cn := range cluster {
		nodes[i].Cluster = cn
		cn.SetStreamHandler(nodes[i].Service.HandleStream)
		nodes[i].Service.Attach(cn)
		nodes[i].API.Start()
		if err = nodes[i].startAdmin(cfgs[i].AdminAddr, admin.Options{Pprof: cfgs[i].AdminPprof}); err != nil {
			return nodes, err
		}
	}
	return nodes, nil
}

// advertisedAPI is the API address to advertise for the bound one.
func (c Config) advertisedAPI(bound string) string {
	if c.AdvertiseAPI != "" {
		return c.AdvertiseAPI
	}
	_, port, err := net.SplitHostPort(bound)
	if c.Cluster.Advertise == "" || err != nil {
		return bound
	}
	return net.JoinHostPort(c.Cluster.Advertise, port)
}

// startAdmin serves the admin endpoints if addr is set.
func (n *Node) startAdmin(addr string, opts admin.Options) error {
	if addr == "" {
		return nil
	}
	a, err := admin.Listen(addr, admin.Source{Service: n.Service, Cluster: n.Cluster.Stats}, opts)
	if err != nil {
		return err
	}
	n.Admin = a
	a.Start()
	return nil
}

// startEngine opens the service and binds the API of one node.
func startEngine(c Config) (*Node, error) {
	sc := c.Service
	if sc.Logger == nil {
		sc.Logger = c.Logger
	}
	if sc.SpillDir == "" && c.Cluster.DataDir != "" {
		sc.SpillDir = filepath.Join(c.Cluster.DataDir, "spill")
	}
	svc, err := service.New(sc)
	if err != nil {
		return nil, err
	}
	addr := c.APIAddr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	srv, err := api.ListenSecure(addr, svc, c.Logger, c.APISecurity)
	if err != nil {
		svc.Close()
		return nil, err
	}
	return &Node{Service: svc, API: srv}, nil
}

// Close stops the API, the cluster membership (without a graceful leave:
// use Leave first for that) and the service. Idempotent.
func (n *Node) Close() error {
	if n == nil {
		return nil
	}
	var errs []error
	if n.Admin != nil {
		errs = append(errs, n.Admin.Close())
		n.Admin = nil
	}
	if n.API != nil {
		errs = append(errs, n.API.Close())
	}
	if n.Cluster != nil {
		errs = append(errs, n.Cluster.Close())
	}
	if n.Service != nil {
		errs = append(errs, n.Service.Close())
	}
	return errors.Join(errs...)
}

func closeAll(nodes []*Node) {
	for _, n := range nodes {
		n.Close()
	}
}

// CloseAll closes every node.
func CloseAll(nodes []*Node) error {
	var errs []error
	for _, n := range nodes {
		errs = append(errs, n.Close())
	}
	return errors.Join(errs...)
}
