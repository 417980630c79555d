package recovery

// Action is what a Failover asks its caller to do.
type Action int

// The actions of a Failover, in the order a round may ask for them.
const (
	// Done: nothing (more) to do in this round.
	Done Action = iota
	// Ping: ping Decision.Nodes and feed each answer to Answered.
	Ping
	// Verdict: a quorum was settled (Decision.Quorum): record it (a warning
	// once while it is short) and step again.
	Verdict
	// TakeOver: take over as coordinator in Decision.Term, moving to the
	// epoch Decision.Epoch whose lost list is Decision.Lost, then step again
	// with the view after it.
	TakeOver
	// Later: the epoch moved while this node pinged the members: decide
	// again later, on the route as it will be then.
	Later
	// Lose: declare Decision.Nodes lost, one at a time, in order.
	Lose
)

var actionNames = [...]string{"done", "ping", "verdict", "take-over", "later", "lose"}

// String names the action.
func (a Action) String() string { return actionNames[a] }

// Quorum is a settled quorum: the rule, the count and whether it was met.
type Quorum struct {
	Rule  Rule
	Count Count
	Met   bool
}

// Decision is one step of a Failover.
type Decision struct {
	Action Action
	// Nodes: whom to ping (Ping) or declare lost (Lose).
	Nodes []string
	// Term, Epoch, Lost: the takeover (TakeOver).
	Term, Epoch uint64
	Lost        []string
	// Quorum: the settled quorum (Verdict).
	Quorum Quorum
}

// stage is where a Failover stands.
type stage int

const (
	stageStart stage = iota
	stageTakeoverPoll
	stageTakeoverCheck
	stageLoseStart
	stageLosePoll
	stageLoseCheck
	stageDone
)

// Failover is one node's reaction to the members it sees down in one
// shuffle, for one round: as the successor of a coordinator seen down, take
// over with a strict majority of the epoch up; as the coordinator, declare
// the members seen down lost with at least half of the members up (see the
// quorum rules above). A round starts on every membership change; the
// caller serialises rounds of one shuffle.
//
// The caller steps it with its view now, performs the decision, feeds ping
// answers with Answered, and steps again until Done:
//
//	f := recovery.NewFailover()
//	for d := f.Step(view()); d.Action != recovery.Done; d = f.Step(view()) {
//		perform(d)
//	}
type Failover struct {
	stage stage
	first Epoch // the epoch when the round started
	poll  *Poll
	take  Decision
}

// NewFailover starts a round.
func NewFailover() *Failover { return &Failover{} }

// Answered feeds the answer of a ping asked by the last Ping decision, and
// reports whether the poll is settled (the caller may stop waiting for the
// other answers, which then count as silence).
func (f *Failover) Answered(node string, ok bool) (settled bool) {
	if f.poll == nil {
		return true
	}
	return f.poll.Answer(node, ok) != VotePending
}

// Step takes the node's view now and returns what to do next.
func (f *Failover) Step(v *View) Decision {
	switch f.stage {
	case stageStart:
		f.first = v.Epoch
		return f.startTakeover(v)
	case stageTakeoverPoll:
		return f.verdict(Majority, stageTakeoverCheck)
	case stageTakeoverCheck:
		return f.checkTakeover(v)
	case stageLoseStart:
		return f.startLose(v)
	case stageLosePoll:
		return f.verdict(Half, stageLoseCheck)
	case stageLoseCheck:
		f.stage = stageDone
		return Decision{Action: Lose, Nodes: v.downInEpoch()}
	}
	return Decision{}
}

// startTakeover decides whether this node is the successor of a
// coordinator seen down, and asks for the pings if it sees a majority.
func (f *Failover) startTakeover(v *View) Decision {
	f.stage = stageLoseStart
	if v.Coordinating || !v.down(v.Epoch.Coordinator) {
		return f.Step(v)
	}
	next, lost, ok := Successor(v.Candidates, v.Epoch.Live, v.Epoch.Lost, v.down)
	if !ok || next != v.Self {
		return f.Step(v)
	}
	_, term, _ := FirstLive(v.Candidates, lost)
	f.take = Decision{Action: TakeOver, Term: term, Epoch: uint64(len(lost)), Lost: lost}
	return f.poll1(v, Majority, stageTakeoverPoll)
}

// poll1 starts a poll under rule if the members seen up meet it, and
// returns the pings; a verdict short of it otherwise.
func (f *Failover) poll1(v *View, rule Rule, next stage) Decision {
	if seen := Seen(v); !rule.Met(seen) {
		return Decision{Action: Verdict, Quorum: Quorum{Rule: rule, Count: seen}}
	}
	f.poll, f.stage = NewPoll(rule, v), next
	return Decision{Action: Ping, Nodes: f.poll.Ask()}
}

// verdict settles the poll under rule: met, the round goes on to next;
// short, to the coordinator's part (after a takeover poll) or its end.
func (f *Failover) verdict(rule Rule, next stage) Decision {
	q := Quorum{Rule: rule, Count: f.poll.Count(), Met: f.poll.Result() == VoteWon}
	f.poll = nil
	switch {
	case q.Met:
		f.stage = next
	case rule == Majority:
		f.stage = stageLoseStart
	default:
		f.stage = stageDone
	}
	return Decision{Action: Verdict, Quorum: q}
}

// checkTakeover takes over, unless the epoch moved while this node pinged
// the members: only a coordinator moves an epoch, so the one seen down was
// alive then, and the event saying it is back may still be queued behind
// the pings. Taking over on the old epoch would make a second coordinator
// in an epoch of its own.
func (f *Failover) checkTakeover(v *View) Decision {
	if v.Epoch.Number != f.first.Number || v.Epoch.Term != f.first.Term {
		f.stage = stageDone
		return Decision{Action: Later}
	}
	f.stage = stageLoseStart
	return f.take
}

// startLose decides whether this node, as the coordinator, has members of
// its epoch seen down to declare lost, and asks for the pings if it sees
// at least half of the members up.
func (f *Failover) startLose(v *View) Decision {
	f.stage = stageDone
	if !v.Coordinating || len(v.downInEpoch()) == 0 {
		return Decision{}
	}
	return f.poll1(v, Half, stageLosePoll)
}

// Settled reports whether the last poll asked for is settled (or none is
// pending): the caller stops waiting for answers.
func (f *Failover) Settled() bool { return f.poll == nil || f.poll.Result() != VotePending }
