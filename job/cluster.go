package job

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/shufflenode/shufflenode/api"
	"github.com/shufflenode/shufflenode/client"
	"github.com/shufflenode/shufflenode/dht"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/node"
	"github.com/shufflenode/shufflenode/service"
)

// ClusterConfig selects the cluster a job runs on: a running one (Addr,
// the API address of any member) or an in-process one of Nodes nodes on
// 127.0.0.1.
type ClusterConfig struct {
	Addr        string // API address of a running member; "" runs an in-process cluster
	Nodes       int    // in-process: nodes
	MemoryLimit int64  // in-process: memory budget per node
	DataDir     string // in-process: identities and spill files ("" = temporary, removed on Close)
	// Auth is a running cluster's API TLS settings and token (the
	// in-process cluster is on loopback and needs none).
	Auth   flightproto.ClientAuth
	Logger *slog.Logger
	// SetRuntimeLimit, for an in-process cluster, sets the Go runtime's
	// soft memory limit to all nodes' budgets plus 1 GiB (the binary
	// leaves it unset when GOMEMLIMIT is set).
	SetRuntimeLimit bool
	// ProbeInterval, ProbeTimeout and SuspicionMult, for an in-process
	// cluster, override the failure detector's timers of the local
	// profile (0: the profile's; see dht.Config).
	ProbeInterval, ProbeTimeout time.Duration
	SuspicionMult               int
	// OutputRoots, for an in-process cluster, are the directories its
	// nodes may write job output files under (api.Security.OutputRoots).
	OutputRoots []string
	// InputRoots, for an in-process cluster, are the directories its nodes
	// may read job input files under (api.Security.InputRoots).
	InputRoots []string
}

// Embedded reports whether the cluster runs in this process.
func (c ClusterConfig) Embedded() bool { return c.Addr == "" }

// Cluster is the cluster a job runs on, started or dialed by OpenCluster.
type Cluster struct {
	// Addrs are the members' API addresses, the coordinator first.
	Addrs []string
	// Embedded is true for an in-process cluster.
	Embedded bool
	// StartSeconds is how long starting or dialing took.
	StartSeconds float64
	stop         func()
	once         sync.Once
	nodes        []*node.Node // in-process only
}

// CrossBytes is, for an in-process cluster, the request bytes its nodes
// have sent to other nodes so far (shards and control); 0 for a running
// cluster, whose counters are on its nodes' /metrics.
func (c *Cluster) CrossBytes() int64 {
	var n uint64
	for _, nd := range c.nodes {
		for peer, ps := range nd.Cluster.Stats().Peers {
			if peer != nd.Name() {
				n += ps.BytesSent
			}
		}
	}
	return int64(n)
}

// OpenCluster dials the running cluster at c.Addr or starts an in-process
// one; Close stops what it started.
func OpenCluster(ctx context.Context, c ClusterConfig) (*Cluster, error) {
	t0 := time.Now()
	cl := &Cluster{Embedded: c.Embedded(), stop: func() {}}
	var err error
	if c.Embedded() {
		cl.nodes, cl.stop, err = localCluster(ctx, c)
		cl.Addrs = APIAddrs(cl.nodes)
	} else {
		cl.Addrs, err = ClusterMembers(ctx, c.Addr, c.Auth)
	}
	cl.StartSeconds = time.Since(t0).Seconds()
	return cl, err
}

// Close stops an in-process cluster; it is idempotent.
func (c *Cluster) Close() { c.once.Do(c.stop) }

// Where names the kind of cluster for reports.
func (c *Cluster) Where() string {
	if c.Embedded {
		return "in-process cluster"
	}
	return "running cluster"
}

// ClusterMembers asks a running node for its cluster's API addresses.
func ClusterMembers(ctx context.Context, addr string, auth flightproto.ClientAuth) ([]string, error) {
	c, err := client.DialAuth(addr, auth)
	if err != nil {
		return nil, fmt.Errorf("--cluster %s: %w", addr, err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	members, err := c.Members(ctx)
	if err != nil {
		return nil, fmt.Errorf("--cluster %s: members: %w", addr, err)
	}
	addrs := []string{addr}
	for _, m := range members {
		if m.APIAddr != "" && m.APIAddr != addr {
			addrs = append(addrs, m.APIAddr)
		}
	}
	return addrs, nil
}

// localCluster runs c.Nodes nodes in this process.
func localCluster(ctx context.Context, c ClusterConfig) ([]*node.Node, func(), error) {
	dir, cleanup := c.DataDir, func() {}
	if dir == "" {
		tmp, err := os.MkdirTemp("", "shufflenode-")
		if err != nil {
			return nil, nil, err
		}
		dir, cleanup = tmp, func() { os.RemoveAll(tmp) }
	}
	log := c.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if c.SetRuntimeLimit && c.MemoryLimit > 0 {
		// all nodes, the client and the verifier share the process
		debug.SetMemoryLimit(int64(c.Nodes)*c.MemoryLimit + 1<<30)
	}
	nodes, err := node.StartLocal(ctx, c.Nodes, c.NodeConfig(dir, log))
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	return nodes, func() { node.CloseAll(nodes); cleanup() }, nil
}

// APIAddrs lists the nodes' API addresses.
func APIAddrs(nodes []*node.Node) []string {
	addrs := make([]string, len(nodes))
	for i, n := range nodes {
		addrs[i] = n.APIAddr()
	}
	return addrs
}

// NodeConfig is the config of each node of an in-process cluster of c,
// with its identities and spill files under dir.
func (c ClusterConfig) NodeConfig(dir string, log *slog.Logger) node.Config {
	return node.Config{
		Cluster: dht.Config{DataDir: dir, Profile: dht.ProfileLocal, Logger: log,
			ProbeInterval: c.ProbeInterval, ProbeTimeout: c.ProbeTimeout, SuspicionMult: c.SuspicionMult},
		Service:     service.Config{MemoryLimit: c.MemoryLimit, Logger: log},
		APISecurity: api.Security{OutputRoots: c.OutputRoots, InputRoots: c.InputRoots},
		Logger:      log,
	}
}
