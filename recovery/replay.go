package recovery

// Replay choice: what the loss of a receiver does to each task whose
// attempt finished. The barrier keeps, per task, the finished attempt's
// receivers (by position in the attempt's epoch), whether each got data of
// it and whether each reported its commit; these functions decide over
// those facts alone.

// Receipt is one receiver's part of a task's finished attempt, as the
// coordinator recorded it.
type Receipt struct {
	// Data: the attempt sent this receiver data (at least one piece).
	Data bool
	// Committed: the receiver reported committing the attempt.
	Committed bool
}

// LossEffect is what losing a receiver does to one finished task.
type LossEffect int

// The effects of a loss on a finished task.
const (
	// Unaffected: the task did not wait for the lost receiver (not a
	// receiver of the attempt's epoch, or it already committed and held
	// no data).
	Unaffected LossEffect = iota
	// Excused: the lost receiver held no data of the task: its commit,
	// which may never come, is no longer awaited.
	Excused
	// Replay: the lost receiver held data of the task: the task is
	// finished no more and runs again.
	Replay
)

var lossNames = [...]string{Unaffected: "unaffected", Excused: "excused", Replay: "replay"}

// String names the effect.
func (e LossEffect) String() string { return lossNames[e] }

// OnLoss is the effect on a finished task of losing a receiver: awaited
// reports whether the lost node is a receiver of the attempt's epoch, r is
// its part of the attempt. Data held on the lost node is gone, so the task
// replays; otherwise the task stops waiting for its commit.
func OnLoss(awaited bool, r Receipt) LossEffect {
	switch {
	case !awaited:
		return Unaffected
	case r.Data:
		return Replay
	case r.Committed:
		return Unaffected
	}
	return Excused
}

// OnExcuse is OnLoss for a node whose data every survivor already holds a
// copy of (the first loss of a replicated shuffle): nothing replays, and a
// finished task stops waiting for the lost node's commit.
func OnExcuse(awaited bool, r Receipt) LossEffect {
	if !awaited || r.Committed {
		return Unaffected
	}
	return Excused
}

// PartialReplay reports whether the replay of a task whose finished
// attempt a loss took back may send only what moved to other receivers
// since: true when every receiver of the attempt but the one at position
// lost (-1: none) that got data of it reported its commit. A sender reports
// an attempt finished when its end markers are acknowledged, which may be
// before a receiver stored every entry (a batch it refused as busy is sent
// again after the marker): until that receiver commits, its part of the
// attempt is not kept anywhere for sure, and the replay sends everything.
// receipt returns the receipt at a position in [0, n).
func PartialReplay(n, lost int, receipt func(pos int) Receipt) bool {
	for i := range n {
		if r := receipt(i); i != lost && r.Data && !r.Committed {
			return false
		}
	}
	return true
}

// Adopt reports whether a member adopts an epoch announced to it while it
// is in epoch current: only a newer epoch moves it (a repeat or an older
// announcement changes nothing).
func Adopt(current, announced uint64) bool { return announced > current }

// Absorbed reports whether the loss that brings a shuffle to losses lost
// members needs no replay: a replicated shuffle keeps a copy of every shard
// on a second member, which absorbs the first loss and no more.
func Absorbed(replicated bool, losses int) bool { return replicated && losses == 1 }

// Reseal reports whether a shuffle that a loss left sealed (the lost node
// held nothing) must announce its seal again in the new epoch: it was not
// announced to every member before the loss (the announcement in the old
// epoch may have missed the lost node, and members leave a superseded
// epoch's outcome alone), and the shuffle has not failed.
func Reseal(sealed, announced, failed bool) bool { return sealed && !announced && !failed }
