package recovery

// Handover: how a node that leaves on purpose (a drain) gives the output
// partitions it holds to their next owners instead of leaving them to be
// replayed. The draining node asks the coordinator to move the epoch
// without it as a planned departure: partitions get new owners exactly as
// on a loss, but the data the node committed stays good, so the tasks
// that sent it run again only where that data is not committed there.
// The node then copies its committed data to the new owners, keyed by
// (task, attempt, partition), and tells the coordinator it finished. Until
// then the coordinator holds the seal back; a handover that fails, or a
// node lost before it finished, falls back to the loss path once.

// HandOverMode is how a draining node treats one shuffle it holds.
type HandOverMode int

// The modes of a shuffle's handover.
const (
	// HandNothing: nothing to copy (the node holds none of its
	// partitions, or the shuffle is gone or failed, or every partition it
	// holds has a copy on a live member).
	HandNothing HandOverMode = iota
	// HandCopy: move the epoch without the node as a planned departure
	// and copy its committed partitions to their new owners.
	HandCopy
	// HandRefuse: this node cannot hand the shuffle over (it coordinates
	// it, or the shuffle's kind is not handed over); it leaves as lost.
	HandRefuse
)

var handModeNames = [...]string{HandNothing: "nothing", HandCopy: "copy", HandRefuse: "refuse"}

// String names the mode.
func (m HandOverMode) String() string { return handModeNames[m] }

// HandOverFacts are what a draining node knows of one shuffle it holds.
type HandOverFacts struct {
	// Gone: the shuffle is freed or failed here.
	Gone bool
	// Holds: the node owns or backs up at least one output partition.
	Holds bool
	// Replicated: the shuffle keeps a second copy of each shard, and Lost
	// members are lost already.
	Replicated bool
	Lost       int
	// Coordinates: the node coordinates the shuffle (its departure needs a
	// takeover, which a handover does not do).
	Coordinates bool
	// Copyable: the node can copy the shuffle's committed data (dataframe
	// shuffles; array chunks are assembled in place and not copied).
	Copyable bool
}

// PlanHandOver decides how a draining node treats one shuffle it holds.
func PlanHandOver(f HandOverFacts) HandOverMode {
	switch {
	case f.Gone || !f.Holds:
		return HandNothing
	case f.Replicated && f.Lost == 0:
		return HandNothing // every partition has a copy: the loss path (a takeover too) replays nothing
	case f.Coordinates || !f.Copyable:
		return HandRefuse
	}
	return HandCopy
}

// OnHandOver is OnLoss for a node that leaves on purpose and hands over
// what it committed: a finished task whose data the node committed is
// kept (the node copies it to the new owners); one whose data it holds
// but did not commit runs again (nothing committed there to copy); one
// that sent it nothing stops waiting for its commit.
func OnHandOver(awaited bool, r Receipt) LossEffect {
	switch {
	case !awaited || r.Committed:
		return Unaffected
	case r.Data:
		return Replay
	}
	return Excused
}

// HandOvers is a coordinator's record of the handovers of one shuffle:
// which nodes hand over now, whether it holds the seal back for them, and
// which handovers ended. Each handover ends once, finished or fallen back.
// Not safe for concurrent use: the shuffle's lock guards it.
type HandOvers struct {
	handing map[string]bool // node -> true while it hands over
	ended   map[string]bool // node -> the handover ended (either way)
	held    bool            // a seal was decided while a node handed over
}

// HandOverEnd is what ending one handover asks of the coordinator.
type HandOverEnd struct {
	// Ended: this call ended the handover (false: it had ended already, or
	// never began: nothing to do).
	Ended bool
	// FallBack: the handover failed: replay what the node held, as after
	// its loss.
	FallBack bool
	// Seal: a seal was held back and no handover is left: decide it now.
	Seal bool
}

// Begin records that node starts handing over; false if it began before.
func (h *HandOvers) Begin(node string) bool {
	if h.handing[node] || h.ended[node] {
		return false
	}
	if h.handing == nil {
		h.handing, h.ended = map[string]bool{}, map[string]bool{}
	}
	h.handing[node] = true
	return true
}

// Handing reports whether node hands over now.
func (h *HandOvers) Handing(node string) bool { return h.handing[node] }

// Hold reports whether a seal decided now must wait for a handover, and
// if so remembers it.
func (h *HandOvers) Hold() bool {
	if len(h.handing) == 0 {
		return false
	}
	h.held = true
	return true
}

// End ends node's handover: ok says whether it finished (its data is
// committed at the new owners) or failed (the node was lost, its deadline
// passed, a copy failed).
func (h *HandOvers) End(node string, ok bool) HandOverEnd {
	if !h.handing[node] {
		return HandOverEnd{}
	}
	delete(h.handing, node)
	h.ended[node] = true
	e := HandOverEnd{Ended: true, FallBack: !ok}
	if h.held && len(h.handing) == 0 {
		h.held, e.Seal = false, true
	}
	return e
}
