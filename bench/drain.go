package bench

import (
	"context"
	"time"

	"github.com/shufflenode/shufflenode/node"
)

// benchDrainTimeout bounds a drain in bench recovery, as serve's
// --drain-timeout does.
const benchDrainTimeout = 20 * time.Second

// drainAndLeave drains n (new puts refused, running ones finished, its
// partitions handed over), makes it leave the cluster and closes it: what
// serve does on SIGTERM. It returns the bytes the drain handed over.
func drainAndLeave(n *node.Node) int64 {
	ctx, cancel := context.WithTimeout(context.Background(), benchDrainTimeout)
	defer cancel()
	res, _ := n.Service.Drain(ctx)
	_ = n.Cluster.Leave(5 * time.Second)
	_ = n.Close()
	return res.HandedBytes
}
