package service

import (
	"github.com/shufflenode/shufflenode/limits"
	"github.com/shufflenode/shufflenode/puts"
	"github.com/shufflenode/shufflenode/shuffle"
)

// Sentinel errors. Errors returned by this package wrap one of these with %w
// and name the shuffle and, where it applies, the task, attempt, partition
// and node. The client API maps them to status codes.
var (
	// ErrUnknownShuffle: no shuffle of that ID on this node.
	ErrUnknownShuffle = shuffle.ErrUnknownShuffle
	// ErrExists: a shuffle of that ID already exists.
	ErrExists = shuffle.ErrExists
	// ErrBadInput: the request is invalid (task out of range, wrong schema,
	// bad partition column values...).
	ErrBadInput = shuffle.ErrBadInput
	// ErrConflict: the same (task, attempt) is already being put.
	ErrConflict = puts.ErrConflict
	// ErrNotSealed: outputs are read only after the barrier.
	ErrNotSealed = shuffle.ErrNotSealed
	// ErrSealed: the shuffle is sealed and takes no more input.
	ErrSealed = shuffle.ErrSealed
	// ErrFailed: the shuffle failed; the error says why.
	ErrFailed = shuffle.ErrFailed
	// ErrNotOwner: this node does not own the output partition.
	ErrNotOwner = shuffle.ErrNotOwner
	// ErrClosed: the service is closed.
	ErrClosed = shuffle.ErrClosed
	// ErrStaleEpoch: the shuffle's ownership changed (a node was lost)
	// while the attempt ran; run the task again with a new attempt.
	ErrStaleEpoch = shuffle.ErrStaleEpoch
	// ErrStaleTerm: a coordinator decision came from a coordinator that
	// was replaced (its term is older than this node's).
	ErrStaleTerm = shuffle.ErrStaleTerm
	// ErrLeft: the shuffle goes on without this node (an epoch move
	// declared it lost and it freed the shuffle); ask another node. Comes
	// wrapped with ErrUnavailable.
	ErrLeft = shuffle.ErrLeft
	// ErrDeclaredLost: the shuffle moved to an epoch in which this node is
	// lost; the node frees it.
	ErrDeclaredLost = shuffle.ErrDeclaredLost
	// ErrUnavailable: a peer could not be reached.
	ErrUnavailable = shuffle.ErrUnavailable
	// ErrNoQuorum: this node sees the shuffle's coordinator down but too
	// few members up for a takeover (it may be on the minority side of a
	// partition); it always comes with ErrUnavailable: ask again, or ask
	// another node.
	ErrNoQuorum = shuffle.ErrNoQuorum
	// ErrReplayDiffers: a replayed dataframe task produced other rows than
	// its first attempt for an output partition that kept the first
	// attempt's rows; the shuffle fails (it comes wrapped with ErrFailed).
	ErrReplayDiffers = shuffle.ErrReplayDiffers
	// ErrLimit: a create asks more than this node allows (Config.MaxShuffles,
	// MaxTasks, MaxPartitions); the error names the limit.
	ErrLimit = limits.ErrLimit
)
