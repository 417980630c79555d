package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/shufflenode/shufflenode/client"
	"github.com/shufflenode/shufflenode/dht"
	"github.com/shufflenode/shufflenode/node"
	"github.com/shufflenode/shufflenode/service"
)

// clusterOpts selects the cluster a CLI job runs on: a running one
// (cluster, an API address of any member) or an in-process one of nodes
// nodes on 127.0.0.1.
type clusterOpts struct {
	cluster  string
	nodes    int
	memLimit int64
	dataDir  string // in-process: identities and spill files ("" = temporary)
	logLevel string
}

// openCluster returns the API addresses of the cluster (the coordinator
// first) and a function that stops it if it was started here.
func openCluster(ctx context.Context, o clusterOpts, stderr io.Writer) ([]string, func(), error) {
	if o.cluster != "" {
		addrs, err := clusterMembers(ctx, o.cluster)
		return addrs, func() {}, err
	}
	return localCluster(ctx, o, stderr)
}

// clusterMembers asks a running node for its cluster's API addresses.
func clusterMembers(ctx context.Context, addr string) ([]string, error) {
	c, err := client.Dial(addr)
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

// localCluster runs o.nodes nodes in this process.
func localCluster(ctx context.Context, o clusterOpts, stderr io.Writer) ([]string, func(), error) {
	dir, cleanup := o.dataDir, func() {}
	if dir == "" {
		tmp, err := os.MkdirTemp("", "shufflenode-")
		if err != nil {
			return nil, nil, err
		}
		dir, cleanup = tmp, func() { os.RemoveAll(tmp) }
	}
	log := newLogger(stderr, o.logLevel)
	softMemoryLimit(int64(o.nodes)*o.memLimit, 1<<30) // all nodes, the client and the verifier share the process
	nodes, err := node.StartLocal(ctx, o.nodes, node.Config{
		Cluster: dht.Config{DataDir: dir, Profile: "local", Logger: log},
		Service: service.Config{MemoryLimit: o.memLimit, Logger: log},
		Logger:  log,
	})
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	addrs := make([]string, len(nodes))
	for i, n := range nodes {
		addrs[i] = n.APIAddr()
	}
	return addrs, func() { node.CloseAll(nodes); cleanup() }, nil
}
