package shuffle

import (
	"github.com/shufflenode/shufflenode/ownership"
	"github.com/shufflenode/shufflenode/splitaxes"
)

// ownersFor returns epoch 0's ownership: dealt by hash, or for an array
// whose old chunks' nodes are known (Spec.OldLocations), chosen to keep the
// most bytes local (ownership.ByAffinity).
func (st *State) ownersFor() (*ownership.Map, error) {
	sp := st.Spec
	if sp.OldLocations == nil || st.Array == nil {
		return ownership.New(sp.Seed(), st.Members, sp.Partitions)
	}
	return ownership.ByAffinity(sp.Seed(), st.Members, sp.Partitions, st.arrayAffinities())
}

// arrayAffinities returns, for every new chunk, the bytes of its pieces per
// node that puts their old chunk: one walk over every piece of the plan.
func (st *State) arrayAffinities() []ownership.Affinity {
	plan, item := st.Array.Plan, int64(st.Array.DType.ItemSize())
	var out []ownership.Affinity
	for p := range st.Spec.Partitions {
		pieces, err := plan.Pieces(splitaxes.Unravel(p, plan.NewGrid()))
		if err != nil {
			continue
		}
		for nd := range pieces {
			out = append(out, ownership.Affinity{Partition: p, Bytes: pieceBytes(nd, item),
				Member: st.Spec.OldLocations[splitaxes.Ravel(nd.OldChunk, plan.OldGrid())]})
		}
	}
	return out
}

// pieceBytes is the byte size of an ndsplit; an open-ended slice (an
// unchanged axis of unknown size) counts as 1, which weighs every piece
// alike along it.
func pieceBytes(nd splitaxes.NDSplit, item int64) int64 {
	n := item
	for _, s := range nd.Slices {
		if s.OpenEnded() {
			continue
		}
		n *= s.Stop - s.Start
	}
	return n
}
