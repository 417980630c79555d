package puts

import (
	"context"
	"errors"
	"log/slog"

	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/failover"
	"github.com/shufflenode/shufflenode/limits"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/splitter"
)

// Errors of a put. ErrConflict is this package's; the others are the
// shuffle's sentinels (package shuffle), under the names the put's code
// uses.
var (
	// ErrConflict: the same (task, attempt) is already being put.
	ErrConflict = errors.New("puts: task attempt already running")
	// ErrBadInput: the input or its task is invalid.
	ErrBadInput = shuffle.ErrBadInput
	// ErrSealed: the shuffle is sealed and takes no more input.
	ErrSealed = shuffle.ErrSealed
	// ErrStaleEpoch: the epoch moved while the attempt ran.
	ErrStaleEpoch = shuffle.ErrStaleEpoch
)

// Config configures a Runner. Every field is required.
type Config struct {
	// Node is this node's name.
	Node string
	// Log is the node's logger.
	Log *slog.Logger
	// Splitter cuts and sends the input.
	Splitter *splitter.Splitter
	// Inputs bounds the input batches the puts hold at once.
	Inputs *limits.Gate
	// Lookup returns the put side of shuffle id for a client's put, or
	// the error to answer.
	Lookup func(ctx context.Context, id string) (*Shuffle, error)
	// DrainRefusal refuses a new put of attempt k while the node drains.
	DrainRefusal func(sh *Shuffle, k shuffle.AttemptKey) error
	// Request sends a control message to the node named and returns its
	// reply.
	Request func(ctx context.Context, node string, c control.Msg) (control.Reply, error)
	// ReportTask sends a begin or done report to sh's coordinator,
	// batched with the node's other reports, and returns its answer.
	ReportTask func(ctx context.Context, sh *Shuffle, c control.Msg) (control.Reply, error)
	// AfterPut, if set, is told how each put attempt of sh ended (nil: it
	// succeeded): a node that is not a member of sh re-reads its record.
	AfterPut func(ctx context.Context, sh *Shuffle, err error)
}

// Runner runs the input tasks put on one node.
type Runner struct {
	name         string
	log          *slog.Logger
	split        *splitter.Splitter
	inputs       *limits.Gate
	clientLookup func(ctx context.Context, id string) (*Shuffle, error)
	drainRefusal func(sh *Shuffle, k shuffle.AttemptKey) error
	request      func(ctx context.Context, node string, c control.Msg) (control.Reply, error)
	reportTask   func(ctx context.Context, sh *Shuffle, c control.Msg) (control.Reply, error)
	afterPut     func(ctx context.Context, sh *Shuffle, err error)
}

// New returns a Runner.
func New(cfg Config) *Runner {
	return &Runner{name: cfg.Node, log: cfg.Log, split: cfg.Splitter, inputs: cfg.Inputs, clientLookup: cfg.Lookup,
		drainRefusal: cfg.DrainRefusal, request: cfg.Request, reportTask: cfg.ReportTask, afterPut: cfg.AfterPut}
}

// Name is this node's name.
func (s *Runner) Name() string { return s.name }

// Shuffle is the put side of one shuffle on this node: its failover state
// and the node's local puts of it.
type Shuffle struct {
	*failover.Shuffle
	puts map[shuffle.AttemptKey]bool // local puts: false running, true finished; guarded by the shuffle's lock
}

// NewShuffle returns the put side of sh whose local puts are recorded in
// running (false: running, true: finished), under sh's lock; the caller
// may read running under that lock (a drain counts the puts running).
func NewShuffle(sh *failover.Shuffle, running map[shuffle.AttemptKey]bool) *Shuffle {
	return &Shuffle{Shuffle: sh, puts: running}
}

// finished records an attempt this node finished as a sender (its end
// markers acknowledged by every receiver), reported to the coordinator as c.
func (sh *Shuffle) finished(c *control.Msg) { sh.Finished(c) }
