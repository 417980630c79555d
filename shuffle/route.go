package shuffle

import (
	"fmt"
	"slices"

	"github.com/shufflenode/shufflenode/dedup"
	"github.com/shufflenode/shufflenode/ownership"
)

// Route is one epoch's routing of a shuffle, as every member computes it:
// epoch 0's map with the lost members removed in the order they were lost.
// It is never mutated.
type Route struct {
	Epoch    uint64
	Lost     []string // members lost so far, in order
	Owners   *ownership.Map
	GroupOf  []int         // output partition -> owner's index in State.Members
	BackupOf []int         // replication 2: partition -> backup's index, -1 for none
	Owned    *dedup.Bitset // partitions this node owns
	Held     *dedup.Bitset // partitions this node owns or backs up: what it accepts and commits
	Live     []string      // members not lost, sorted
	// Coordinator is the node that coordinates this epoch and Term its term:
	// both follow from Lost (see coord.go).
	Coordinator string
	Term        uint64
}

// RouteFor computes the routing of the epoch in which lost (in order) are
// gone.
func (st *State) RouteFor(lost []string) (*Route, error) {
	owners := st.owners0
	for _, l := range lost {
		var err error
		if owners, err = owners.Without(l); err != nil {
			return nil, fmt.Errorf("service: shuffle %s: epoch %d: %w", st.ID(), len(lost), err)
		}
	}
	return st.layout(uint64(len(lost)), lost, owners), nil
}

// layout derives a route from an ownership map. A replicated shuffle keeps
// data where its copies are: a partition stays with its epoch-0 owner while
// it lives, then goes to its epoch-0 backup (which holds a copy), and only
// when both are lost to the map's owner; shards go to the owner and, while
// it lives and differs, the epoch-0 backup.
func (st *State) layout(epoch uint64, lost []string, owners *ownership.Map) *Route {
	n := st.Spec.Partitions
	r := &Route{Epoch: epoch, Lost: lost, Owners: owners, GroupOf: make([]int, n),
		Owned: dedup.NewBitset(n), Held: dedup.NewBitset(n)}
	idx := make(map[string]int, len(st.Members))
	for i, m := range st.Members {
		idx[m] = i
		if !slices.Contains(lost, m) {
			r.Live = append(r.Live, m)
		}
	}
	r.Coordinator, r.Term, _ = st.coordinatorFor(lost)
	if st.Spec.Replicated() {
		r.BackupOf = make([]int, n)
	}
	for p := range n {
		o, b := st.placement(p, lost, owners)
		r.GroupOf[p] = idx[o]
		r.mark(p, o == st.Self, b == st.Self)
		if r.BackupOf != nil {
			r.BackupOf[p] = -1
			if b != "" {
				r.BackupOf[p] = idx[b]
			}
		}
	}
	return r
}

// placement returns partition p's owner and live backup ("" for none).
func (st *State) placement(p int, lost []string, owners *ownership.Map) (owner, backup string) {
	if !st.Spec.Replicated() {
		return owners.Owner(p), ""
	}
	primary, second := st.owners0.Owner(p), st.owners0.Backup(p)
	alive := func(m string) bool { return m != "" && !slices.Contains(lost, m) }
	switch {
	case alive(primary) && alive(second) && primary != second:
		return primary, second
	case alive(primary):
		return primary, ""
	case alive(second):
		return second, ""
	}
	return owners.Owner(p), ""
}

// mark records what this node does for partition p.
func (r *Route) mark(p int, owns, backs bool) {
	if owns {
		r.Owned.Set(p)
	}
	if owns || backs {
		r.Held.Set(p)
	}
}

// Holds reports whether member index m held partition part in this route:
// as its owner or its backup.
func (r *Route) Holds(part, m int) bool {
	return r.GroupOf[part] == m || (r.BackupOf != nil && r.BackupOf[part] == m)
}

// HoldsAny reports whether member index m holds (owns or backs up) any
// output partition in this route.
func (r *Route) HoldsAny(m int) bool {
	for p := range r.GroupOf {
		if r.Holds(p, m) {
			return true
		}
	}
	return false
}
