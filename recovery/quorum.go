package recovery

// Quorum. A partition looks, from each side, like a crash of the other
// side: both see the others' members down. So that at most one side moves
// a shuffle on, a node counts the members it has up, itself included, and
// acts on a loss only with enough of them:
//
//   - a successor takes over from a coordinator seen down only with a
//     strict majority of the members of the shuffle's current epoch (its
//     live list, as the successor knows it) up (Majority): first as it sees
//     them (not seen down), then as they answer a ping. Failure detection
//     reports the other side of a partition one member at a time, often the
//     coordinator first: a member not seen down yet may be on the other
//     side, one that answers is on this one;
//   - the coordinator declares members lost (moves their partitions,
//     orders their replays, may seal without them) only with at least half
//     of the shuffle's members (every member pinned at create) up (Half):
//     first as it sees them, then as they answer a ping. It breaks the tie
//     of an even split. Below half it declares nobody lost and waits; when
//     members come back it decides again, and when the partition heals the
//     others are simply back.
//
// The coordinator counts against every member pinned at create, not its
// current epoch, for the same one-at-a-time reason: against its shrinking
// epoch, a coordinator cut off alone from three would see 3 of 4, then 2
// of 3, then 1 of 2 up and end up alone in a member list of its own, free
// to seal, while the three others take over. Counted against every member,
// and with the ping, it declares none of them lost: the members it does
// not see down yet do not answer.
//
// Why at most one side acts: let A be the coordinator's side of a
// partition and B the other, disjoint; LB the epoch's members as B knows
// them and M every member pinned at create (the coordinator's epochs only
// drop members from LB, which is within M). To seal without B, the
// coordinator must declare every member of B in its epoch lost; when it
// declares the last one, its epoch's other members are all in A, and it
// needs 2*|A up| >= |M|. B takes over only if a strict majority of LB
// answered its successor, all in B: 2*|B| > |LB|. Both cannot hold:
// A up and B are disjoint parts of LB, so |B| <= |LB| - |M|/2 <= |LB|/2.
//
// The cost: with 4 members, a crash of the coordinator and one other
// member at once leaves 2 of 4 up, not a strict majority, and the shuffle
// waits for one of them to come back; with 5 members 3 of 5 go on. A
// coordinator whose members crash one after another stops declaring them
// lost once fewer than half of the members pinned at create are up.

// Count is how many members of a shuffle's current epoch a node has up
// (itself included), of how many the epoch has live, and how many the
// shuffle pinned at create.
type Count struct{ Up, Live, Members int }

// Majority reports a strict majority of the epoch up: enough to take over.
func (c Count) Majority() bool { return 2*c.Up > c.Live }

// Half reports at least half of the members pinned at create up: enough
// for the coordinator to declare the others lost.
func (c Count) Half() bool { return 2*c.Up >= c.Members }

// Rule is the quorum a decision needs.
type Rule int

// The rules of the two decisions that need a quorum.
const (
	// Majority: a successor's takeover (Count.Majority).
	Majority Rule = iota
	// Half: a coordinator's declaring members lost (Count.Half).
	Half
)

// Met reports whether c satisfies r.
func (r Rule) Met(c Count) bool {
	if r == Half {
		return c.Half()
	}
	return c.Majority()
}

// String names the rule.
func (r Rule) String() string {
	if r == Half {
		return "half"
	}
	return "majority"
}

// Seen counts the members of v's epoch up as v's node sees them: itself and
// every member it has not seen down.
func Seen(v *View) Count {
	c := Count{Live: len(v.Epoch.Live), Members: v.Members}
	for _, n := range v.Epoch.Live {
		if n == v.Self || !v.Down[n] {
			c.Up++
		}
	}
	return c
}

// VoteResult is the state of a poll: three-valued, as a poll may still
// wait for answers.
type VoteResult int

// The results of a poll.
const (
	// VotePending: answers are missing and the rule is not met yet.
	VotePending VoteResult = iota
	// VoteLost: every member asked answered or gave up, and the rule is not met.
	VoteLost
	// VoteWon: the rule is met.
	VoteWon
)

// String names the result.
func (r VoteResult) String() string {
	switch r {
	case VoteWon:
		return "won"
	case VoteLost:
		return "lost"
	}
	return "pending"
}

// Poll counts the answers to a round of pings: the node itself is up, and
// so is every member that answers. Any reply counts, a refusal too. A
// member not seen down yet may be on the other side of a partition; one
// that answers now is on this one.
type Poll struct {
	rule    Rule
	ask     []string
	count   Count
	pending map[string]bool
}

// NewPoll starts a poll under rule of the members of v's epoch not seen
// down, but v's node.
func NewPoll(rule Rule, v *View) *Poll {
	p := &Poll{rule: rule, count: Count{Up: 1, Live: len(v.Epoch.Live), Members: v.Members}, pending: map[string]bool{}}
	for _, n := range v.Epoch.Live {
		if n != v.Self && !v.Down[n] {
			p.ask = append(p.ask, n)
			p.pending[n] = true
		}
	}
	return p
}

// Ask returns the members to ping, in the epoch's order (do not modify).
func (p *Poll) Ask() []string { return p.ask }

// Answer records whether node answered its ping and returns the poll's
// result. A node not asked, or already counted, changes nothing.
func (p *Poll) Answer(node string, answered bool) VoteResult {
	if !p.pending[node] {
		return p.Result()
	}
	delete(p.pending, node)
	if answered {
		p.count.Up++
	}
	return p.Result()
}

// Result is the poll's state now.
func (p *Poll) Result() VoteResult {
	switch {
	case p.rule.Met(p.count):
		return VoteWon
	case len(p.pending) == 0:
		return VoteLost
	}
	return VotePending
}

// Count is the poll's count now.
func (p *Poll) Count() Count { return p.count }
