package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/shufflenode/shufflenode/dht"
	"github.com/shufflenode/shufflenode/node"
	"github.com/shufflenode/shufflenode/service"
)

// serveFlags are the flags of serve; they fill a node.Config.
type serveFlags struct {
	name, dataDir, listen, gossip, api, join string
	admin                                    string
	advertise, advGossip, advAPI, advP2P     string
	rejoinInterval                           time.Duration
	networkKey, gossipKey, profile, logLevel string
	memLimit, opMemory                       byteSize
	idleExpiry, keepRegions                  time.Duration
	sec                                      apiSecurityFlags
	pprof, insecureCluster                   bool
	limits                                   limitFlags
	probeInterval, probeTimeout              time.Duration
	suspicionMult                            int
	outputRoots                              string
	inputRoots                               string
	drainTimeout                             time.Duration
}

func (f *serveFlags) register(fs interface {
	StringVar(*string, string, string, string)
}) {
	host, _ := os.Hostname()
	fs.StringVar(&f.name, "name", host, "unique node name in the cluster")
	fs.StringVar(&f.dataDir, "data-dir", "shufflenode-data", "directory for the identity key and spill files")
	fs.StringVar(&f.listen, "listen", "/ip4/127.0.0.1/tcp/0", "libp2p listen multiaddrs for peer streams, comma-separated")
	fs.StringVar(&f.gossip, "gossip", "127.0.0.1:7946", "memberlist gossip address host:port (TCP and UDP)")
	fs.StringVar(&f.api, "api", "127.0.0.1:7947", "client API (Arrow Flight) address host:port")
	fs.StringVar(&f.admin, "admin", "127.0.0.1:7948", "admin HTTP address for /metrics, /status and, with --pprof, /debug/pprof; no authentication: keep it on loopback (empty: off)")
	fs.StringVar(&f.join, "join", "", "gossip addresses of members to join, comma-separated")
	fs.StringVar(&f.advertise, "advertise", "", "host (IP or DNS name) other nodes and clients use to reach this one, with the bound gossip, libp2p and API ports (empty: the bound addresses)")
	fs.StringVar(&f.advGossip, "advertise-gossip", "", "gossip address host:port to advertise (overrides --advertise for gossip)")
	fs.StringVar(&f.advAPI, "advertise-api", "", "client API address host:port to advertise (overrides --advertise for the API)")
	fs.StringVar(&f.advP2P, "advertise-p2p", "", "libp2p multiaddrs to advertise, comma-separated (override --advertise for peer streams)")
	fs.StringVar(&f.networkKey, "network-key", "", "file with a 32-byte libp2p private-network key (PSK)")
	fs.StringVar(&f.gossipKey, "gossip-key", "", "file with a 16, 24 or 32-byte memberlist encryption key")
	fs.StringVar(&f.profile, "profile", "lan", "memberlist timers: lan or local (fast, for loopback)")
	fs.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&f.outputRoots, "output-root", "", "directories, comma-separated, under which clients may have this node write job output files (shuffle, merge and set-index --write-on nodes; the same path on every node and client: a shared file system); empty: the node writes none")
	fs.StringVar(&f.inputRoots, "input-root", "", "directories, comma-separated, under which clients may have this node read job input files (shuffle, merge and set-index --read-on nodes; the same path on every node and client: a shared file system); empty: the node reads none")
}

// config turns the flags into a node.Config.
func (f *serveFlags) config() (node.Config, error) {
	log := newLogger(os.Stderr, f.logLevel)
	c := node.Config{APIAddr: f.api, AdvertiseAPI: f.advAPI, AdminAddr: f.admin, AdminPprof: f.pprof, Logger: log,
		Cluster: dht.Config{Name: f.name, DataDir: f.dataDir, GossipAddr: f.gossip, Profile: f.profile,
			ListenAddrs: splitList(f.listen), Join: splitList(f.join), RejoinInterval: f.rejoinInterval,
			Advertise: f.advertise, AdvertiseGossip: f.advGossip, AdvertiseAddrs: splitList(f.advP2P), Logger: log,
			JoinWait:      -1, // until SIGTERM: nodes started together race their seeds
			ProbeInterval: f.probeInterval, ProbeTimeout: f.probeTimeout, SuspicionMult: f.suspicionMult},
		Service: service.Config{MemoryLimit: int64(f.memLimit), OpMemory: int64(f.opMemory), SpillDir: filepath.Join(f.dataDir, "spill"),
			IdleExpiry: f.idleExpiry, KeepRegions: f.keepRegions, Logger: log},
	}
	f.limits.apply(&c.Service)
	var err error
	if c.APISecurity, err = f.sec.security(); err != nil {
		return c, err
	}
	c.APISecurity.OutputRoots = splitList(f.outputRoots)
	c.APISecurity.InputRoots = splitList(f.inputRoots)
	if c.Cluster.NetworkKey, err = readKey(f.networkKey); err != nil {
		return c, err
	}
	c.Cluster.GossipKey, err = readKey(f.gossipKey)
	return c, err
}

func readKey(path string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading key: %w", err)
	}
	return []byte(strings.TrimSpace(string(b))), nil
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// newServeFlags returns serve's flag set, filling f.
func newServeFlags(f *serveFlags, stderr io.Writer) *flag.FlagSet {
	fs := newFlags("serve", stderr)
	f.register(fs)
	f.memLimit = 1 << 30
	fs.Var(&f.memLimit, "memory-limit", "memory budget for send buffers and the in-memory spill store")
	fs.Var(&f.opMemory, "op-memory", "memory budget for node-side joins and sorts, on top of --memory-limit: an op reserves twice the bytes of the partitions it reads whole and waits while the running ops hold the budget (0: half of --memory-limit)")
	fs.DurationVar(&f.rejoinInterval, "rejoin-interval", 30*time.Second, "contact again, this often, the --join seeds that are not live members (a node cut off for long finds the cluster again; negative: never)")
	fs.DurationVar(&f.idleExpiry, "idle-expiry", time.Hour, "close a shuffle on this node after this long without puts, reads, barrier calls or shards (negative: never)")
	fs.DurationVar(&f.keepRegions, "keep-regions", 30*time.Second, "keep the memory of closed shuffles' received data mapped this long for the next shuffles, up to 3/4 of --memory-limit (negative: never)")
	f.sec.register(fs)
	fs.BoolVar(&f.pprof, "pprof", false, "also serve Go's profiles at /debug/pprof on --admin")
	fs.BoolVar(&f.insecureCluster, "insecure-cluster", false, "allow non-loopback --gossip and --listen addresses without --gossip-key and --network-key (anyone who reaches them joins the cluster)")
	f.limits.register(fs)
	fs.DurationVar(&f.drainTimeout, "drain-timeout", defaultDrainTimeout, "on SIGTERM (or POST /drain on --admin, or the Flight action drain), refuse new puts and let running ones finish for up to this long before leaving; a second SIGTERM or SIGINT stops at once (0: leave at once)")
	fs.DurationVar(&f.probeInterval, "probe-interval", 0, "failure detector: how often a node probes one other member (0: the --profile's, 1s; a crash is declared after a few intervals)")
	fs.DurationVar(&f.probeTimeout, "probe-timeout", 0, "failure detector: how long a probe waits for its ack before asking others to probe (0: the --profile's, 500ms lan, 200ms local; must be shorter than the interval)")
	fs.IntVar(&f.suspicionMult, "suspicion-mult", 0, "failure detector: a suspected member is declared dead after this many intervals, scaled by log10 of the cluster size (0: the --profile's, 4 lan, 3 local)")
	fs.String(configFlag, "", "YAML (or JSON) config file (keys: flag names with _ for -); env SHUFFLENODE_<KEY> overrides it, flags override both")
	return fs
}

// serveOverhead is the Go memory a serve process needs beyond its budget and the service's
// MemoryOverhead: ~15 MiB at rest (runtime, gRPC, libp2p, JSON tables), frames and Flight
// batches in flight and the output batches of reads in progress.
const serveOverhead = 40 << 20

func cmdServe(args []string, stdout, stderr io.Writer) int {
	var f serveFlags
	fs := newServeFlags(&f, stderr)
	if err := parseLayered(fs, args, os.LookupEnv); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		if errors.Is(err, errConfig) {
			fmt.Fprintf(stderr, "shufflenode serve: %v\n", err)
		}
		return 2
	}
	cfg, err := f.config()
	if err == nil {
		err = f.sec.checkExposed(cfg.APIAddr, cfg.APISecurity)
	}
	if err == nil {
		err = checkCluster(cfg, f.insecureCluster)
	}
	if err == nil {
		err = checkAdmin(cfg)
	}
	if err != nil {
		fmt.Fprintf(stderr, "shufflenode serve: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	limit := softMemoryLimit(cfg.Service.MemoryLimit, serveOverhead+cfg.Service.OpBudget()+cfg.Service.MemoryOverhead())
	n, err := node.Start(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "shufflenode serve: %v\n", err)
		return 1
	}
	if limit > 0 {
		go followOffheap(limit, func() int64 { return n.Service.Stats().MappedBytes })
	}
	warnOpenAPI(cfg)
	warnOpenCluster(cfg, f.insecureCluster)
	warnAdmin(cfg)
	cfg.Logger.Info("serving", "node", n.Name(), "api", n.APIAddr(), "gossip", n.Cluster.Self().GossipAddr, "peer", n.Cluster.Self().PeerID)
	select {
	case <-ctx.Done():
	case <-n.Service.DrainRequested():
	}
	stop() // a second signal stops the process at once: the loss path
	cfg.Logger.Info("stopping", "node", n.Name())
	drainNode(n, f.drainTimeout, cfg.Logger)
	_ = n.Cluster.Leave(5 * time.Second)
	if err := n.Close(); err != nil {
		fmt.Fprintf(stderr, "shufflenode serve: closing: %v\n", err)
		return 1
	}
	return 0
}
