package recovery

import "slices"

// Epoch is one epoch of a shuffle as a node knows it.
type Epoch struct {
	// Number is the epoch: how many members were lost.
	Number uint64
	// Term is the coordinator's place among the candidates.
	Term uint64
	// Coordinator coordinates this epoch.
	Coordinator string
	// Live are the members not lost, in member order; Lost the lost ones,
	// in the order they were lost.
	Live, Lost []string
}

// View is what a node knows of one shuffle when it decides. The core reads
// it and never modifies it; the caller builds a new one for every event.
type View struct {
	// Self is the deciding node.
	Self string
	// Candidates are the shuffle's coordinator candidates, in order
	// (Candidates).
	Candidates []string
	// Members is how many members the shuffle pinned at create.
	Members int
	// Epoch is the shuffle's current epoch on this node.
	Epoch Epoch
	// Coordinating: this node holds the coordinator part of Epoch (it
	// coordinates, and has rebuilt after a takeover).
	Coordinating bool
	// Down are the members this node has seen failed or gone and not back
	// since.
	Down map[string]bool
}

// down reports whether v's node sees n down.
func (v *View) down(n string) bool { return v.Down[n] }

// downInEpoch are the members of v's epoch seen down, but v's node, in
// the epoch's order.
func (v *View) downInEpoch() []string {
	var out []string
	for _, n := range v.Epoch.Live {
		if n != v.Self && v.Down[n] {
			out = append(out, n)
		}
	}
	return out
}

// Others returns nodes without self, in order.
func Others(nodes []string, self string) []string {
	return slices.DeleteFunc(slices.Clone(nodes), func(n string) bool { return n == self })
}
