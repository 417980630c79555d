package reports

import (
	"context"
	"log/slog"
	"sync/atomic"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/coordinator"
	"github.com/shufflenode/shufflenode/shuffle"
)

// Config configures a Reporter. Every field is required.
type Config struct {
	// Node is this node's name, the author of its reports.
	Node string
	// Request sends a control message to the node named and returns its
	// reply; a refusal comes back as the error PeerError makes of it.
	Request func(ctx context.Context, node string, c control.Msg) (control.Reply, error)
	// PeerError is the error Request returns for a refusal of shuffle id
	// by node: Task gives it for a report refused in a batch's reply.
	PeerError func(id, node string, err error) error
	// Unavailable is the sentinel wrapped by the error of a report that
	// was not answered (the node closes, a batch's reply is short).
	Unavailable error
	// Go runs fn on a goroutine that the node's Close waits for, unless
	// Close has begun, and reports whether it runs.
	Go func(fn func(ctx context.Context)) bool
	// Log is where failed commit reports are logged.
	Log *slog.Logger
}

// Reporter batches one node's reports to the coordinators of its shuffles.
type Reporter struct {
	cfg     Config
	commits queue[*shuffle.State, control.Committed]
	tasks   queue[taskDest, *taskCall]
	// batches and batched count the OpTasks messages sent and the reports
	// they carried.
	batches, batched atomic.Int64
}

// New returns a Reporter.
func New(cfg Config) *Reporter { return &Reporter{cfg: cfg} }

// TaskBatches returns how many batched begin and done messages the node
// sent and how many reports they carried.
func (r *Reporter) TaskBatches() (batches, reports int64) {
	return r.batches.Load(), r.batched.Load()
}

// Coordinator is what unbatching needs of the node's coordinator;
// *coordinator.Coordinator implements it.
type Coordinator interface {
	// Begin registers a task attempt (control.OpBegin).
	Begin(co *coordinator.Shuffle, c *control.Msg) (control.Reply, error)
	// Report takes a done or committed report.
	Report(co *coordinator.Shuffle, c *control.Msg) error
}
