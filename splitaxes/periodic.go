package splitaxes

import "fmt"

// ghosts are the widths of a periodic axis's ghost zones: [0, g[0]) copies
// [L, L+g[0]) and [total-g[1], total) copies [g[0], g[0]+g[1]), L being
// the period total-g[0]-g[1]. The data of the axis is its period
// [g[0], total-g[1]); planning maps global index i of it to i-g[0].
type ghosts [2]int64

// Ghosts returns the ghost zone widths of a periodic Block axis (the first
// chunk's padding before, the last chunk's padding after); zero otherwise.
func (d *Dist) Ghosts() [2]int64 {
	if d == nil || !d.Periodic || d.Type != Block || len(d.Pad) == 0 {
		return [2]int64{}
	}
	return [2]int64{d.Pad[0][0], d.Pad[len(d.Pad)-1][1]}
}

// Wrap returns the global index whose value index i of an axis of length
// total with ghost zones g holds: i itself, or for a ghost the index of the
// period it copies.
func Wrap(i, total int64, g [2]int64) int64 {
	period := total - g[0] - g[1]
	switch {
	case i < g[0]:
		return i + period
	case i >= total-g[1]:
		return i - period
	}
	return i
}

// axisGhosts returns the ghost zones of an axis: a periodic side's, which
// the other side, if periodic, must share; the period must be at least as
// long as each ghost zone (a ghost copies the period, not another ghost).
// The error wraps ErrBadRun.
func axisGhosts(old, new *Dist, total int64) (ghosts, error) {
	go_, gn := ghosts(old.Ghosts()), ghosts(new.Ghosts())
	g := go_
	if g == (ghosts{}) {
		g = gn
	}
	switch {
	case old.isPeriodic() && new.isPeriodic() && go_ != gn:
		return g, fmt.Errorf("periodic ghost zones %v on the old side, %v on the new: %w", go_, gn, ErrBadRun)
	case g[0] < 0 || g[1] < 0 || total-g[0]-g[1] < max(g[0], g[1]):
		return g, fmt.Errorf("periodic ghost zones %v of an axis of %d: the period must be at least as long as each: %w", g, total, ErrBadRun)
	}
	return g, nil
}

func (d *Dist) isPeriodic() bool { return d != nil && d.Periodic && d.Type == Block }

// wrapOld clips old runs to the period and maps them into it (a periodic
// old side has dropped its ghosts already; a non-periodic one's positions
// in the ghost zones are not read).
func (g ghosts) wrapOld(rs []Run, total int64) []Run {
	out := make([]Run, 0, len(rs))
	for _, r := range rs {
		lo, hi := max(r.Global, g[0]), min(r.Global+r.Len, total-g[1])
		if lo < hi {
			out = append(out, Run{Chunk: r.Chunk, Global: lo - g[0], Local: r.Local + lo - r.Global, Len: hi - lo})
		}
	}
	return out
}

// wrapNew cuts new runs at the ghost zones' edges and maps each stretch
// into the period: a ghost stretch to the stretch it copies.
func (g ghosts) wrapNew(rs []Run, total int64) []Run {
	out := make([]Run, 0, len(rs)+2)
	for _, r := range rs {
		for lo, end := r.Global, r.Global+r.Len; lo < end; {
			hi := min(end, g.zoneEnd(lo, total))
			out = append(out, Run{Chunk: r.Chunk, Global: Wrap(lo, total, g) - g[0], Local: r.Local + lo - r.Global, Len: hi - lo})
			lo = hi
		}
	}
	return out
}

// zoneEnd returns where the zone (ghost before, period, ghost after) that
// holds index i ends.
func (g ghosts) zoneEnd(i, total int64) int64 {
	switch {
	case i < g[0]:
		return g[0]
	case i < total-g[1]:
		return total - g[1]
	}
	return total
}
