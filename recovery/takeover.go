package recovery

// Takeover inference: a node that takes over from a lost coordinator
// rebuilds the barrier from what the members report. A sender lost with the
// coordinator reports nothing, so whether its attempt finished is inferred
// from the receivers' commits.

// Witness is one receiver of an epoch, for one attempt, as the node taking
// over sees it.
type Witness struct {
	// Live: the receiver is a member still (it could report).
	Live bool
	// Committed: it reported committing the attempt.
	Committed bool
	// Owned: it owned partitions in the attempt's epoch.
	Owned bool
}

// Sent is what the rebuilt barrier counts as sent to one receiver by an
// inferred attempt.
type Sent int

// What an inferred attempt sent to a receiver.
const (
	// AsCommitted: what the receiver reported holding (nothing if it
	// reported no commit and owned no partitions).
	AsCommitted Sent = iota
	// Data: unknown but counted as data (one piece), so that the
	// receiver's loss replays the task unless a replica absorbs it.
	Data
)

var sentNames = [...]string{AsCommitted: "as-committed", Data: "data"}

// String names the inference.
func (s Sent) String() string { return sentNames[s] }

// Committed reports whether every live receiver among the n witnesses of an
// attempt committed it. For an attempt no sender reported, it is whether
// the attempt counts as finished: a receiver commits only with the
// attempt's end marker and every piece it announces, so what it holds is
// what the sender sent it. For a finished attempt, false means a commit
// that will never come (the attempt was reported, but a live receiver's
// commit raced the takeover): the task replays in full. witness returns the
// witness at a position in [0, n).
func Committed(n int, witness func(pos int) Witness) bool {
	for i := range n {
		if w := witness(i); w.Live && !w.Committed {
			return false
		}
	}
	return true
}

// InferSent is what an inferred attempt counts as sent to a receiver: what
// a lost receiver that owned partitions got is unknown and counts as data.
func InferSent(w Witness) Sent {
	if !w.Live && w.Owned {
		return Data
	}
	return AsCommitted
}

// TakeoverAnswer is a member's answer to a successor's takeover.
type TakeoverAnswer int

// The answers to a takeover.
const (
	// TakeoverSilent: no answer (dying, unreachable): its facts are
	// missing, and the tasks that needed them replay; it stays live until
	// failure detection reports it.
	TakeoverSilent TakeoverAnswer = iota
	// TakeoverFacts: it moved to the successor's epoch and sent its facts.
	TakeoverFacts
	// TakeoverUnheld: it holds no state of the shuffle (it left it, was
	// declared lost in another line of epochs, restarted, or never had it).
	TakeoverUnheld
)

// LoseAfterTakeover are the members, of a takeover's answers by node, that
// the successor declares lost once it coordinates, in name order: those
// that hold no state of the shuffle. A node that dropped the shuffle still
// answers pings (a refusal is an answer), so it may count toward the
// takeover's majority and be live in its epoch; left live, it would own
// partitions nobody holds, and every put would retry against it until its
// deadline. Declared lost, as a restarted member is (Unheld), its tasks
// replay on the others.
func LoseAfterTakeover(answers map[string]TakeoverAnswer) []string {
	var out []string
	for _, n := range sortedKeys(answers) {
		if answers[n] == TakeoverUnheld {
			out = append(out, n)
		}
	}
	return out
}
