package recovery

import (
	"slices"
	"strconv"
)

// Rejoin. A node cut off for longer than failure detection is lost to the
// shuffles it belongs to: their coordinators move on without it, and may
// finish and close them while it cannot hear. When it comes back nobody
// tells it (the close and the epoch moves gave up on it), so it asks: for
// every shuffle it holds and does not coordinate, it sends a check to the
// shuffle's coordinator candidates (for one it coordinates: see Back), when
// members come back and every recheck period. It frees the shuffle (as a
// close does) when the answers show that nobody counts it in (Decide):
//
//   - closed from any candidate: the shuffle's client closed it, which is
//     meant for every node;
//   - otherwise, only once every candidate that could still coordinate
//     answered, none of them counting this node in: each either
//     coordinates it and has this node lost in its epoch (StatusLost), or
//     does not coordinate it (StatusUnknown: it never had it, restarted,
//     freed it, or follows another coordinator).
//
// Any candidate that counts this node in (StatusMember), or that did not
// answer (down, unreachable, busy taking over), keeps the shuffle: ask
// again later. The candidates asked are every candidate but this node
// (CheckTargets), those it knows lost too: the lost list only grows along
// one line of epochs, but after a split two lines may exist, each of
// them moved by its own coordinator (the coordinator's side declaring the
// other lost in term 0; a successor from the other side, still seeing the
// coordinator down when the split mends, taking over in term 1 with the
// healed majority's answers). A member of the older line knows the newer
// line's coordinator lost; not asking it, it would find nobody counting it
// in once its own coordinator was fenced and stepped down, drop the
// shuffle, and leave the newer coordinator routing partitions to a node
// that refuses them (a livelock: the puts retry until their deadline).
// Fencing by term decides between the lines: a candidate that coordinates
// in a newer term than the one this node follows, in another line (its
// epoch's lost list, in its answer, lacks a node this node has lost: not
// Joinable), and counts it in wins.
// This node cannot move to that line (its state belongs to the other one:
// Joinable refuses that line's epochs), so it tells that coordinator
// (Ruling.Tell), which declares it lost, as for a restarted member
// (Unheld), and has what it held replayed; it keeps the shuffle until
// then (dropping it first would leave the coordinator routing to a node
// that no longer answers for it, should the message be lost), and its
// next check, answered "lost", drops it. A candidate this node knows lost that does not answer
// keeps nothing (it may be gone for good). Asking them all keeps the node
// safe across a failover it missed too: the coordinator it knows may have
// been replaced and restarted (it answers unknown, as one that never had
// the shuffle does), or be the stale side of a split that declared this
// node lost while a successor of a higher term counts it in; a successor
// that holds the shuffle is always among the candidates asked, and its
// member keeps it. The healthy case costs one request: the coordinator
// this node knows answers member, and the others are not asked.

// Status is a node's answer to a check about a shuffle.
type Status int

// The answers to a check.
const (
	// NoAnswer: the node did not answer (down, unreachable, busy).
	NoAnswer Status = iota
	// StatusMember: it coordinates the shuffle and counts the asker live.
	StatusMember
	// StatusLost: it coordinates the shuffle and has the asker lost.
	StatusLost
	// StatusClosed: it freed the shuffle on its client's close.
	StatusClosed
	// StatusUnknown: it does not coordinate the shuffle.
	StatusUnknown
	// StatusBusy: it is taking over; ask again.
	StatusBusy
)

var statusNames = [...]string{"no-answer", "member", "lost", "closed", "unknown", "busy"}

// String names the status.
func (s Status) String() string { return statusNames[s] }

// Answer is one node's answer to a check: its status and, when it
// coordinates, its epoch and term.
type Answer struct {
	Status      Status
	Epoch, Term uint64
	// Lost is the lost list of its epoch, when it coordinates.
	Lost []string
}

// Ruling is what the answers to a check say of a shuffle held here: drop
// it or not, why, and whether because it was closed (else it goes on
// without this node).
type Ruling struct {
	Why          string
	Drop, Closed bool
	// Tell are the coordinators of another line of epochs, of a newer
	// term than the one this node follows, that count it in: it keeps the
	// shuffle (it refuses their epochs) and tells them it holds no state
	// of their line; they declare it lost, and its next check drops it.
	Tell []string
}

// closedBy is the ruling of a close that node n saw.
func closedBy(n string) Ruling {
	return Ruling{Why: "closed (node " + n + " freed it on its client's close)", Drop: true, Closed: true}
}

// CheckTargets are the candidates a member that does not coordinate asks:
// every candidate but self, the ones it knows lost too, in candidate order.
func CheckTargets(v *View) []string { return Others(v.Candidates, v.Self) }

// First rules on the answer of the coordinator this node knows: decided
// when it counts this node in (keep) or closed the shuffle (drop); else the
// other targets are asked and Decide rules.
func First(n string, a Answer) (r Ruling, decided bool) {
	switch a.Status {
	case StatusMember:
		return Ruling{}, true
	case StatusClosed:
		return closedBy(n), true
	}
	return Ruling{}, false
}

// Decide applies the rules above to the answers of the candidates, by
// node, for a node whose view is v.
func Decide(v *View, answers map[string]Answer) Ruling {
	why := "no candidate coordinates it"
	keep := false
	var other []string
	for _, n := range sortedKeys(answers) {
		switch a := answers[n]; {
		case a.Status == StatusClosed:
			return closedBy(n)
		case a.Status == StatusMember && !Joinable(v.Epoch, a.Term, a.Lost):
			other = append(other, n)
		case a.Status == StatusLost:
			why = "declared lost in epoch " + strconv.FormatUint(a.Epoch, 10) + " by its coordinator " + n
		case a.Status == StatusUnknown:
		case a.Status == NoAnswer && slices.Contains(v.Epoch.Lost, n):
		default: // member, busy, or no answer
			keep = true
		}
	}
	if len(other) > 0 {
		a := answers[other[0]]
		why = "node " + other[0] + " coordinates it in term " + strconv.FormatUint(a.Term, 10) +
			", in another line of epochs than this node's epoch " + strconv.FormatUint(v.Epoch.Number, 10) +
			" of term " + strconv.FormatUint(v.Epoch.Term, 10) + ", and counts this node in: it is asked to declare this node lost"
		return Ruling{Why: why, Tell: other}
	}
	return Ruling{Why: why, Drop: !keep}
}

// Joinable reports whether a node whose epoch is mine may move to the
// epoch where lost are gone, announced by the coordinator of term: one of
// a newer term must be of the same line of epochs (lost holds every node
// mine has lost). One of another line (see above) is refused: the node
// cannot join it with state of its own line; its check asks that line's
// coordinator to declare it lost instead.
func Joinable(mine Epoch, term uint64, lost []string) bool {
	if term <= mine.Term {
		return true
	}
	for _, n := range mine.Lost {
		if !slices.Contains(lost, n) {
			return false
		}
	}
	return true
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// CheckQuery is what a node knows when it answers a check from Asker.
type CheckQuery struct {
	Asker string
	// Held: this node holds the shuffle; ClosedHere: it freed it on its
	// client's close (only when not Held).
	Held, ClosedHere bool
	// View is this node's view of the shuffle (when Held).
	View View
}

// AnswerCheck is this node's answer to a check (see the statuses).
func AnswerCheck(q *CheckQuery) Answer {
	v := &q.View
	switch {
	case !q.Held && q.ClosedHere:
		return Answer{Status: StatusClosed}
	case !q.Held:
		return Answer{Status: StatusUnknown}
	case v.Coordinating && slices.Contains(v.Epoch.Live, q.Asker):
		return Answer{Status: StatusMember, Epoch: v.Epoch.Number, Term: v.Epoch.Term, Lost: v.Epoch.Lost}
	case v.Coordinating:
		return Answer{Status: StatusLost, Epoch: v.Epoch.Number, Term: v.Epoch.Term, Lost: v.Epoch.Lost}
	case v.Epoch.Coordinator == v.Self:
		return Answer{Status: StatusBusy, Epoch: v.Epoch.Number, Term: v.Epoch.Term}
	}
	return Answer{Status: StatusUnknown}
}

// Record is what the cluster's record of a shuffle says of it: its pinned
// members, and the lost list of its latest epoch with that epoch's
// coordinator and term.
type Record struct {
	Members, Lost []string
	Coordinator   string
	Term          uint64
}

// Unheld is the answer of a node asked by a client about a shuffle it does
// not hold, though the cluster's record knows it (the node restarted, or
// missed the create, or was declared lost): never "unknown", which a client
// takes as final, but "ask another node", with the reason. A node cannot
// rejoin a shuffle it lost the state of: what it committed before is gone,
// and only its coordinator declaring it lost (a new epoch, the replays of
// what it held) makes the shuffle whole again. So a member the record
// still counts live tells the coordinator it restarted (tell): a restart
// quicker than failure detection is never reported as a failure.
func Unheld(self string, r *Record) (why string, tell bool) {
	switch {
	case slices.Contains(r.Lost, self):
		return "node " + self + " was declared lost in epoch " + strconv.Itoa(len(r.Lost)) + " by " + r.Coordinator, false
	case !slices.Contains(r.Members, self):
		return "node " + self + " is not one of its members", false
	}
	return "node " + self + " holds no state of it (it restarted): it asks its coordinator " + r.Coordinator + " to declare it lost", true
}
