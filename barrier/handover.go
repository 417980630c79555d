package barrier

import (
	"fmt"

	"github.com/shufflenode/shufflenode/recovery"
)

// HandOver is Lose for a receiver that leaves on purpose and copies what
// it committed to the receivers that take its partitions over in epoch
// (a drain): a done task whose data node committed stays done (node
// copies it), one whose data node holds uncommitted is replayed, one that
// sent node nothing stops waiting for its commit (recovery.OnHandOver).
// The caller keeps the seal back until the copy is done, and calls
// FallBack if it never is. Errors as for Lose.
func (t *Tracker) HandOver(epoch int, node string, survivors []string) (replay []uint64, d Decision, err error) {
	return t.move(epoch, node, survivors, recovery.OnHandOver)
}

// FallBack takes back a handover (HandOver) of node that did not finish:
// node is gone and nothing of it can be trusted to have reached the new
// owners, so every done task whose done attempt sent node data runs again
// as after its loss (recovery.OnLoss): replay, ascending. Receivers that
// did get some of the copy keep it, and drop the replay's rows for those
// partitions by ID. A sealed tracker reopens when a task replays. The
// error wraps ErrUnknownReceiver (node was never a receiver) or ErrFailed;
// on error nothing changes.
func (t *Tracker) FallBack(node string) (replay []uint64, err error) {
	r, ok := t.index[node]
	if !ok {
		return nil, fmt.Errorf("%w: shuffle %s: node %s is not a receiver", ErrUnknownReceiver, t.shuffle, node)
	}
	if t.phase == Failed {
		return nil, fmt.Errorf("%w: shuffle %s: %w", ErrFailed, t.shuffle, t.err)
	}
	for task := range t.tasks {
		if t.tasks[task].done && t.heldBy(uint64(task), r) {
			t.undo(uint64(task), t.epochs[t.tasks[task].epoch].posOf(r))
			replay = append(replay, uint64(task))
		}
	}
	if len(replay) > 0 && t.phase == Sealed {
		t.phase = Running
	}
	return replay, nil
}

// heldBy reports whether done task's done attempt sent receiver r data.
func (t *Tracker) heldBy(task uint64, r int32) bool {
	ts := &t.tasks[task]
	p := t.epochs[ts.epoch].posOf(r)
	return recovery.OnLoss(p >= 0, ts.receipt(int(p))) == recovery.Replay
}
