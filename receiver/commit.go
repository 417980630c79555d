package receiver

import (
	"fmt"

	"github.com/shufflenode/shufflenode/barrier"
	"github.com/shufflenode/shufflenode/shard"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/wire"
)

// stored counts a stored entry and commits if the attempt is complete.
func (rc *Receiver) stored(sh *Shuffle, e *shard.Entry) error {
	rows := e.Rows()
	sh.Lock()
	rs := sh.attempt(shuffle.AttemptKey{Task: e.Task, Attempt: e.Attempt})
	rs.stored++
	rs.held.Add(rows, uint64(len(e.Data)), shard.Checksum(e.Data))
	commit := sh.tryCommit(shuffle.AttemptKey{Task: e.Task, Attempt: e.Attempt}, rs)
	sh.Unlock()
	return rc.afterCommit(sh, commit)
}

// receiveEnd records an end marker and commits if the attempt is complete.
func (rc *Receiver) receiveEnd(sh *Shuffle, rt *shuffle.Route, e shard.End) error {
	if e.Task >= uint64(sh.Spec.Tasks) {
		return shuffle.Refuse(wire.RefuseBadRequest, fmt.Errorf("shuffle %s: end of task %d out of range", sh.ID(), e.Task))
	}
	k := shuffle.AttemptKey{Task: e.Task, Attempt: e.Attempt}
	sh.Lock()
	rs := sh.attempt(k)
	if rs.end == nil {
		rs.end = &e
		rs.epoch = rt.Epoch
	}
	commit := sh.tryCommit(k, rs)
	sh.Unlock()
	return rc.afterCommit(sh, commit)
}

// Commit is an attempt this node committed, to report to the coordinator.
type Commit struct {
	Key   shuffle.AttemptKey
	Epoch uint64         // the epoch the attempt ran in
	Held  barrier.Totals // what this node holds of it
	// Differs, for a replay of a dataframe task, is a partition that kept
	// an earlier attempt's rows here and for which this attempt produced
	// other rows; nil when they agree (see Differs).
	Differs *Differs
	// Replaced, for a replay of a dataframe task of a shuffle whose spec
	// asks for it (spec.OnDifferReplayWhole), is the difference for which
	// this attempt took the task's rows of every partition this node holds
	// in place of an earlier attempt's (see replaceWhole); Differs is then
	// nil.
	Replaced *Differs
}

// tryCommit commits k if its marker and all its entries are in, for the
// partitions this node holds (owns or backs up) in the attempt's epoch. An attempt of an older
// epoch never commits: it may lack partitions that moved here since, and
// its task runs again. Called with the shuffle's lock held:
// the epoch check and the ledger commit see the route an epoch move
// replaces under the same lock.
func (sh *Shuffle) tryCommit(k shuffle.AttemptKey, rs *attempt) *Commit {
	if rs.committed || rs.end == nil || rs.stored != rs.end.Pieces || rs.epoch != sh.RouteLocked().Epoch {
		return nil
	}
	replay := sh.ledger.TaskCommitted(k.Task)
	held := sh.RouteLocked().Held
	owned, err := sh.ledger.Commit(k.Task, k.Attempt, held)
	if err != nil {
		return nil // unreachable: task range was checked
	}
	rs.committed = true
	c := &Commit{Key: k, Epoch: rs.epoch, Held: rs.held}
	if replay {
		c.Differs = sh.checkReplay(k, rs, held, owned)
		sh.replaceWhole(k, held, c)
	}
	return c
}

// afterCommit hands a commit to Config.Committed.
func (rc *Receiver) afterCommit(sh *Shuffle, c *Commit) error {
	if c != nil {
		rc.cfg.Committed(sh.State, *c)
	}
	return nil
}
