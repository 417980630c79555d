package barrier

import "strconv"

// Phase is where a shuffle is in its life at the coordinator.
type Phase int

const (
	// Running: tasks are being put and committed; the barrier is not reached.
	Running Phase = iota
	// Sealed: every task has a done attempt committed at all its receivers
	// with matching totals. No more reports are accepted.
	Sealed
	// Failed: a mismatch or an external failure ended the shuffle.
	Failed
)

// String returns "running", "sealed" or "failed".
func (p Phase) String() string {
	switch p {
	case Running:
		return "running"
	case Sealed:
		return "sealed"
	case Failed:
		return "failed"
	}
	return "phase(" + strconv.Itoa(int(p)) + ")"
}

// Decision is what one event asks the caller to do. At most one field is
// set. Over the life of a Tracker, Seal is true in exactly one returned
// Decision (the event that completes the barrier) and Fail is non-nil in at
// most one (the event that fails the shuffle); never both.
type Decision struct {
	// Seal: the barrier was reached by this event; the caller seals the
	// shuffle (tells receivers to refuse new data and verify).
	Seal bool
	// Fail: the shuffle failed by this event; the caller fails it
	// everywhere. It wraps ErrMismatch for a totals mismatch.
	Fail error
}

// Progress is a snapshot of a Tracker's counters.
type Progress struct {
	// Phase is the Tracker's phase.
	Phase Phase
	// Epoch is the current receiver epoch (see SetReceivers).
	Epoch int
	// Tasks is the number of input tasks.
	Tasks int
	// TasksDone counts tasks with a done attempt.
	TasksDone int
	// TasksCommitted counts tasks whose done attempt is committed at all of
	// its receivers.
	TasksCommitted int
	// Commits counts (receiver, task) pairs committed for the task's done
	// attempt.
	Commits int
	// CommitsExpected is the number of such pairs the barrier needs: for
	// done tasks the receivers of their epoch, for the others the receivers
	// of the current epoch.
	CommitsExpected int
	// Totals sums the senders' reports over all done attempts.
	Totals Totals
}
