package shuffle

import (
	"errors"
	"time"

	"github.com/shufflenode/shufflenode/wire"
)

// Sentinel errors shared by the roles. Package service exports them under
// the same names (its callers match them with errors.Is); errors wrap one of
// them with %w and name the shuffle and, where it applies, the task,
// attempt, partition and node.
var (
	// ErrBadInput: the request is invalid (task out of range, wrong schema,
	// bad partition column values...).
	ErrBadInput = errors.New("service: bad input")
	// ErrNotSealed: outputs are read only after the barrier.
	ErrNotSealed = errors.New("service: shuffle not sealed yet")
	// ErrSealed: the shuffle is sealed and takes no more input.
	ErrSealed = errors.New("service: shuffle sealed")
	// ErrFailed: the shuffle failed; the error says why.
	ErrFailed = errors.New("service: shuffle failed")
	// ErrNotOwner: this node does not own the output partition.
	ErrNotOwner = errors.New("service: partition owned by another node")
	// ErrStaleEpoch: the shuffle's ownership changed (a node was lost)
	// while the attempt ran; run the task again with a new attempt.
	ErrStaleEpoch = errors.New("service: stale epoch")
	// ErrStaleTerm: a coordinator decision (seal, fail, epoch move) came
	// from a coordinator that was replaced: its term is older than the
	// node's.
	ErrStaleTerm = errors.New("service: stale coordinator term")
	// ErrOtherLine: an epoch move of a newer term came from another line
	// of epochs than this node's (after a split, each side's coordinator
	// moved the shuffle on its own): the node cannot join it, and asks
	// that line's coordinator to declare it lost.
	ErrOtherLine = errors.New("service: epoch move of another line of epochs")
	// ErrDeclaredLost: the coordinator moved the shuffle to an epoch in
	// which this node is lost; it holds nothing of it any more.
	ErrDeclaredLost = errors.New("service: node declared lost")
	// ErrReplayDiffers: a replayed dataframe task produced, for an output
	// partition that kept its first attempt's rows, other rows than that
	// attempt (its row sums differ): the input is not deterministic. The
	// shuffle fails rather than mix the two attempts; the error names the
	// shuffle, the task and the partition.
	ErrReplayDiffers = errors.New("service: replayed task's rows differ from its first attempt")
	// ErrUnknownShuffle: no shuffle of that ID on this node.
	ErrUnknownShuffle = errors.New("service: unknown shuffle")
	// ErrExists: a shuffle of that ID already exists.
	ErrExists = errors.New("service: shuffle already exists")
	// ErrClosed: the node's service is closed.
	ErrClosed = errors.New("service: closed")
	// ErrLeft: the shuffle goes on without this node (an epoch move
	// declared it lost and it freed the shuffle); ask another node. Comes
	// wrapped with ErrUnavailable.
	ErrLeft = errors.New("service: the shuffle goes on without this node")
	// ErrUnavailable: a peer could not be reached.
	ErrUnavailable = errors.New("service: peer unavailable")
	// ErrNoQuorum: this node sees the shuffle's coordinator down but too
	// few members up for a takeover (it may be on the minority side of a
	// partition); it always comes with ErrUnavailable: ask again, or ask
	// another node.
	ErrNoQuorum = errors.New("service: no quorum")
)

// RefuseLeft is the refusal code of a node the shuffle goes on without
// (it was declared lost, or stepped down as a replaced coordinator): it
// will not take the request, now or later; the sender asks another node
// (ErrUnavailable), or learns of the new epoch from the coordinator.
const RefuseLeft wire.RefusalCode = 66

// RefuseReplayDiffers is the refusal code of an error wrapping
// ErrReplayDiffers (a code of the service's range, see wire.RefusalCode).
const RefuseReplayDiffers wire.RefusalCode = 64

// RefuseExists is the refusal code of a create refused because the member
// already holds a shuffle of that ID (another node's create of it).
const RefuseExists wire.RefusalCode = 65

// Busy is an error that the node's handler turns into a TypeBusy reply:
// the sender retries after After.
type Busy struct {
	After time.Duration
	Err   error
}

func (b *Busy) Error() string { return b.Err.Error() }
func (b *Busy) Unwrap() error { return b.Err }

// Refusal is an error that the node's handler turns into a TypeRefused
// reply with Code, which the sender acts on.
type Refusal struct {
	Code wire.RefusalCode
	Err  error
}

func (r *Refusal) Error() string { return r.Err.Error() }
func (r *Refusal) Unwrap() error { return r.Err }

// Refuse returns err as a Refusal with code.
func Refuse(code wire.RefusalCode, err error) error { return &Refusal{Code: code, Err: err} }
