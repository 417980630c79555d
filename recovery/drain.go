package recovery

// Drain decides, step by step, how a node leaves on purpose (SIGTERM, the
// admin endpoint or the Flight action "drain"): it first refuses new input
// tasks, then lets the puts it runs finish, then hands over the output
// partitions of each shuffle it holds to their owners in the epoch without
// it, and leaves. A shuffle it cannot hand over, a deadline that passes or
// a kill while draining makes it leave as if lost: the coordinator replays
// what the node held, exactly as after a crash, and that fallback is
// decided once.
//
// Like Failover it is a plain state machine: the driver feeds it a
// DrainView of what it sees, performs the DrainDecision it returns and
// steps again. Time reaches it only as DrainView.Expired.
type Drain struct {
	phase    drainPhase
	handed   map[string]bool // shuffles handed over
	fellBack bool
}

type drainPhase int

const (
	drainRefusing  drainPhase = iota // refuse new input tasks first
	drainFinishing                   // wait for the puts that run
	drainHanding                     // hand over each shuffle held
	drainLeft                        // the decision to leave was given
)

// DrainAction is what a drain does next.
type DrainAction int

const (
	// DrainRefuse: refuse new input tasks from now on (with the code that
	// sends the client to another node).
	DrainRefuse DrainAction = iota
	// DrainWait: puts still run; step again when fewer do.
	DrainWait
	// DrainHandOver: hand over the shuffles in DrainDecision.Shuffles to
	// their new owners, then step again with the outcome in the view.
	DrainHandOver
	// DrainLeave: leave the cluster; DrainDecision.HandedOver says whether
	// every shuffle was handed over (nothing to replay) or the node must be
	// treated as lost (the loss path).
	DrainLeave
	// DrainDone: nothing more to do.
	DrainDone
)

// String names the action.
func (a DrainAction) String() string {
	return [...]string{"refuse", "wait", "hand over", "leave", "done"}[a]
}

// DrainView is what the driver sees when it steps a drain.
type DrainView struct {
	// Running is the number of puts this node runs.
	Running int
	// Held are the shuffles this node holds output partitions of.
	Held []string
	// Handed are shuffles handed over since the last step; Failed those
	// whose handover failed.
	Handed, Failed []string
	// Expired: the drain's deadline passed. Killed: the node is stopping
	// now, with no time left for a handover.
	Expired, Killed bool
}

// DrainDecision is the drain's next step.
type DrainDecision struct {
	Action DrainAction
	// Shuffles to hand over (DrainHandOver), sorted as given in the view.
	Shuffles []string
	// HandedOver (DrainLeave): every shuffle was handed over; false: the
	// node leaves as lost.
	HandedOver bool
	// Why the drain fell back to the loss path (DrainLeave, !HandedOver).
	Why string
}

// NewDrain returns a drain that has not started.
func NewDrain() *Drain { return &Drain{handed: map[string]bool{}} }

// FellBack reports whether the drain decided to leave as lost.
func (d *Drain) FellBack() bool { return d.fellBack }

// Step returns the next decision given v.
func (d *Drain) Step(v DrainView) DrainDecision {
	if d.phase == drainLeft {
		return DrainDecision{Action: DrainDone}
	}
	if why := d.abort(v); why != "" {
		return d.leave(false, why)
	}
	switch d.phase {
	case drainRefusing:
		d.phase = drainFinishing
		return DrainDecision{Action: DrainRefuse}
	case drainFinishing:
		if v.Running > 0 {
			return DrainDecision{Action: DrainWait}
		}
		d.phase = drainHanding
	}
	return d.handOver(v)
}

// abort returns why the drain must fall back to the loss path now, or "".
func (d *Drain) abort(v DrainView) string {
	switch {
	case v.Killed:
		return "killed while draining"
	case v.Expired:
		return "drain deadline passed"
	case len(v.Failed) > 0:
		return "handover of shuffle " + v.Failed[0] + " failed"
	}
	return ""
}

// handOver asks for the shuffles held and not handed over yet, or leaves
// when there are none.
func (d *Drain) handOver(v DrainView) DrainDecision {
	for _, id := range v.Handed {
		d.handed[id] = true
	}
	var todo []string
	for _, id := range v.Held {
		if !d.handed[id] {
			todo = append(todo, id)
		}
	}
	if len(todo) == 0 {
		return d.leave(true, "")
	}
	return DrainDecision{Action: DrainHandOver, Shuffles: todo}
}

// leave decides to leave, once.
func (d *Drain) leave(handed bool, why string) DrainDecision {
	d.phase = drainLeft
	d.fellBack = !handed
	return DrainDecision{Action: DrainLeave, HandedOver: handed, Why: why}
}
