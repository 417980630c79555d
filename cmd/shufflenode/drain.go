package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/shufflenode/shufflenode/node"
)

// defaultDrainTimeout is how long serve drains before it leaves by
// default: under the 30 s Kubernetes and systemd give a process to stop
// unless told otherwise, with room for leaving and closing.
const defaultDrainTimeout = 20 * time.Second

// drainNode drains n for up to timeout (0: not at all) before the caller
// leaves the cluster: new puts are refused (clients run them on other
// nodes) and the running ones finish. A drain that does not finish in time
// falls back to the loss path: the node leaves, and the coordinators
// replay what it held.
func drainNode(n *node.Node, timeout time.Duration, log *slog.Logger) {
	if timeout <= 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	res, err := n.Service.Drain(ctx)
	if err != nil {
		log.Warn("drain", "node", n.Name(), "err", err)
		return
	}
	log.Info("drain done", "node", n.Name(), "handed_over", res.HandedOver, "why", res.Why, "waited", res.Waited, "bytes", res.HandedBytes)
}
