package bench

import (
	"context"
	"time"

	"github.com/shufflenode/shufflenode/node"
)

// benchDrainTimeout bounds a drain in bench recovery, as serve's
// --drain-timeout does.
const benchDrainTimeout = 20 * time.Second

// drainAndLeave drains n (new puts refused, running ones finished), makes
// it leave the cluster and closes it: what serve does on SIGTERM.
func drainAndLeave(n *node.Node) {
	ctx, cancel := context.WithTimeout(context.Background(), benchDrainTimeout)
	defer cancel()
	_, _ = n.Service.Drain(ctx)
	_ = n.Cluster.Leave(5 * time.Second)
	_ = n.Close()
}
