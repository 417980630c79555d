package reads

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/splitaxes"
)

// Layout, Partition and Ticket are the wire types of an array shuffle's
// layout (see flightproto).
type (
	Layout    = flightproto.Layout
	Partition = flightproto.Partition
	Ticket    = flightproto.Ticket
)

// Layout returns the layout of array shuffle id as this node sees it.
func (r *Reader) Layout(id string) (Layout, error) {
	sh, err := r.cfg.Host.Lookup(id)
	if err != nil {
		return Layout{}, err
	}
	if sh.Array == nil {
		return Layout{}, fmt.Errorf("%w: shuffle %s is not an array rechunk", shuffle.ErrBadInput, id)
	}
	locs, err := r.Locations(id)
	if err != nil {
		return Layout{}, err
	}
	nc := sh.Spec.NewChunks
	l := Layout{Shape: known(sh.Spec.NewShape()), Tiling: nc.Grid(), Partitions: make(map[string]Partition, len(locs))}
	starts := distStarts(axisStarts(nc), sh.Spec.NewDist)
	for p, loc := range locs {
		idx := splitaxes.Unravel(p, l.Tiling)
		part := Partition{Location: []string{loc.Node, loc.APIAddr}, Data: Ticket{Shuffle: id, Partition: p}}
		for a, i := range idx {
			part.Start = append(part.Start, known1(starts[a][i]))
			part.Shape = append(part.Shape, known1(nc[a][i]))
		}
		l.Partitions[gridKey(idx)] = part
	}
	return l, nil
}

// distStarts replaces the starts along distributed new axes: a block
// axis's buffers start at its Starts (padding included); a cyclic or
// unstructured chunk is no box, so its start is unknown (null).
func distStarts(starts [][]int64, dists []*splitaxes.Dist) [][]int64 {
	for a, d := range dists {
		switch {
		case d == nil:
		case d.Type == splitaxes.Block:
			starts[a] = d.Starts
		default:
			for i := range starts[a] {
				starts[a][i] = splitaxes.Unknown
			}
		}
	}
	return starts
}

// axisStarts returns, per axis, where each chunk starts (Unknown after an
// unknown size).
func axisStarts(c [][]int64) [][]int64 {
	out := make([][]int64, len(c))
	for a, axis := range c {
		at := int64(0)
		for _, n := range axis {
			out[a] = append(out[a], at)
			if at != splitaxes.Unknown && n != splitaxes.Unknown {
				at += n
			} else {
				at = splitaxes.Unknown
			}
		}
	}
	return out
}

func gridKey(idx []int) string {
	parts := make([]string, len(idx))
	for a, i := range idx {
		parts[a] = strconv.Itoa(i)
	}
	return strings.Join(parts, ",")
}

func known(v []int64) []*int64 {
	out := make([]*int64, len(v))
	for i := range v {
		out[i] = known1(v[i])
	}
	return out
}

func known1(n int64) *int64 {
	if n == splitaxes.Unknown {
		return nil
	}
	return &n
}
