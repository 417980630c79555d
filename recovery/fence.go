package recovery

// Fencing. One term has exactly one coordinator, and the term only grows;
// a decision of an older term is refused everywhere. A coordinator that was
// frozen, or cut off, while a successor took over in a higher term comes
// back believing it still coordinates: every member refuses its decisions,
// and it must learn that it was replaced and step down, or the members that
// follow it (the client's node among them) wait for a seal that never
// comes.
//
// Both coordinators find out when they check on each other:
//
//   - the coordinator of the higher term asks the members it declared lost
//     and sees up again (Back); one that coordinates in a lower term is a
//     stale coordinator: it is sent the current epoch (Tell), which declares
//     it lost, and it steps down;
//   - a coordinator whose own decisions are refused for their term asks
//     the candidates that follow it (Successors); one that coordinates in a
//     higher term and has it lost says so (StatusLost), and it steps down
//     (StepDown) without waiting to be told.

// FenceAction is what a coordinator does about another that answers a check.
type FenceAction int

// The fence actions.
const (
	// Ignore: the answer says nothing about a second coordinator.
	Ignore FenceAction = iota
	// Tell: the other coordinates in an older term: send it the current
	// epoch, which declares it lost.
	Tell
	// StepDown: the other coordinates in a newer term and has this node
	// lost: this node is replaced; it lets go of the shuffle.
	StepDown
)

var fenceNames = [...]string{"ignore", "tell", "step-down"}

// String names the action.
func (a FenceAction) String() string { return fenceNames[a] }

// Fence rules on answer a of node n to a check from a coordinator of epoch
// mine: a coordinator of another term is fenced by the higher term.
func Fence(mine Epoch, a Answer) FenceAction {
	if a.Status != StatusMember && a.Status != StatusLost {
		return Ignore // n does not coordinate
	}
	switch {
	case a.Term < mine.Term:
		return Tell
	case a.Term > mine.Term && a.Status == StatusLost:
		return StepDown
	}
	return Ignore
}

// Back are the members a coordinator declared lost and sees up again: it
// asks them whether they freed the shuffle on a close (a node cut off that
// coordinated before the cut moved on without the others) or coordinate it
// too (Fence).
func Back(v *View) []string {
	var out []string
	for _, n := range v.Epoch.Lost {
		if n != v.Self && !v.Down[n] {
			out = append(out, n)
		}
	}
	return out
}

// Successors are the candidates after v's node that are not lost and not
// seen down: those that could have replaced it in a higher term.
func Successors(v *View) []string {
	var out []string
	after := false
	for _, c := range v.Candidates {
		switch {
		case c == v.Self:
			after = true
		case after && !v.Down[c]:
			out = append(out, c)
		}
	}
	return out
}
