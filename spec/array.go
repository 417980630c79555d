package spec

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/splitaxes"
)

// Chunks are chunk sizes per axis. In JSON an unknown size (NaN in Dask) is
// null; in Go it is splitaxes.Unknown.
type Chunks [][]int64

// MarshalJSON writes unknown sizes as null.
func (c Chunks) MarshalJSON() ([]byte, error) {
	out := make([][]*int64, len(c))
	for a, axis := range c {
		out[a] = make([]*int64, len(axis))
		for i, n := range axis {
			if n != splitaxes.Unknown {
				out[a][i] = &axis[i]
			}
		}
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads null as an unknown size.
func (c *Chunks) UnmarshalJSON(b []byte) error {
	var in [][]*int64
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*c = make(Chunks, len(in))
	for a, axis := range in {
		(*c)[a] = make([]int64, len(axis))
		for i, n := range axis {
			(*c)[a][i] = splitaxes.Unknown
			if n != nil {
				(*c)[a][i] = *n
			}
		}
	}
	return nil
}

// Grid returns the number of chunks per axis.
func (c Chunks) Grid() []int {
	g := make([]int, len(c))
	for a, axis := range c {
		g[a] = len(axis)
	}
	return g
}

// Shape returns the total size per axis (splitaxes.Unknown where any chunk
// of the axis is unknown).
func (c Chunks) Shape() []int64 {
	s := make([]int64, len(c))
	for a, axis := range c {
		for _, n := range axis {
			if n == splitaxes.Unknown {
				s[a] = splitaxes.Unknown
				break
			}
			s[a] += n
		}
	}
	return s
}

// count is the number of chunks (the product of the grid), or -1 past max.
func (c Chunks) count(limit int) int {
	n := 1
	for _, g := range c.Grid() {
		if g != 0 && n > limit/g {
			return -1
		}
		n *= g
	}
	return n
}

// NewShape returns the array's size per axis as the new side sees it: a
// distributed axis's Dist.Size, else the total of its new chunks
// (splitaxes.Unknown where unknown).
func (s *Spec) NewShape() []int64 {
	shape := s.NewChunks.Shape()
	for a, d := range s.NewDist {
		if d != nil && a < len(shape) {
			shape[a] = d.Size
		}
	}
	return shape
}

// Plan returns the rechunk plan of an array spec.
func (s *Spec) Plan() (*splitaxes.Plan, error) {
	var p *splitaxes.Plan
	var err error
	if s.OldDist == nil && s.NewDist == nil {
		p, err = splitaxes.New(s.OldChunks, s.NewChunks)
	} else {
		p, err = s.distPlan()
	}
	if err != nil {
		return nil, fmt.Errorf("%w: shuffle %s: %w", ErrInvalid, s.ID, err)
	}
	return p, nil
}

// distPlan plans an array whose axes may be distributed (OldDist,
// NewDist): such axes are run axes, the others regular.
func (s *Spec) distPlan() (*splitaxes.Plan, error) {
	nd := len(s.OldChunks)
	if len(s.NewChunks) != nd || (s.OldDist != nil && len(s.OldDist) != nd) || (s.NewDist != nil && len(s.NewDist) != nd) {
		return nil, fmt.Errorf("%d old axes, %d new, %d old dists, %d new dists: %w",
			nd, len(s.NewChunks), len(s.OldDist), len(s.NewDist), splitaxes.ErrNDim)
	}
	axes := make([]*splitaxes.Axis, nd)
	for d := range axes {
		od, ndist := distAt(s.OldDist, d), distAt(s.NewDist, d)
		var err error
		if od == nil && ndist == nil {
			axes[d], err = splitaxes.NewAxis(s.OldChunks[d], s.NewChunks[d])
		} else {
			axes[d], err = splitaxes.NewDistAxis(s.OldChunks[d], od, s.NewChunks[d], ndist)
		}
		if err != nil {
			return nil, fmt.Errorf("axis %d: %w", d, err)
		}
	}
	return splitaxes.FromAxes(axes), nil
}

func distAt(ds []*splitaxes.Dist, d int) *splitaxes.Dist {
	if d >= len(ds) {
		return nil
	}
	return ds[d]
}

// MaxRuns bounds Runs: planning costs about 220 bytes allocated (120
// kept) and under a microsecond per run, so a spec at the bound plans in
// about a second and 1 GB. Nodes cap it lower (service.Config.MaxRuns).
const MaxRuns = 1 << 22

// Runs returns how many runs planning the spec's distributed axes (those
// with an OldDist or NewDist) builds, both sides together, computed from
// the spec alone in O(axes + chunks): what a node checks against its cap
// before it plans. A cyclic axis has a run per block, however small its
// spec; a block or consecutive side a run per chunk; an unstructured side
// at most one per index. It saturates at math.MaxInt64; a malformed dist
// counts 0 (planning refuses it).
func (s *Spec) Runs() int64 {
	var n int64
	for a := range s.OldChunks {
		od, nd := distAt(s.OldDist, a), distAt(s.NewDist, a)
		if od == nil && nd == nil {
			continue
		}
		n = addSat(n, sideRuns(od, s.OldChunks, a))
		n = addSat(n, sideRuns(nd, s.NewChunks, a))
	}
	return n
}

// sideRuns is the run count of one side of axis a (see Runs).
func sideRuns(d *splitaxes.Dist, chunks Chunks, a int) int64 {
	switch {
	case d == nil || d.Type == splitaxes.Block:
		if a < len(chunks) {
			return int64(len(chunks[a]))
		}
		return 0
	case d.Type == splitaxes.Cyclic:
		if d.BlockSize < 1 || d.Size < 0 {
			return 0
		}
		return d.Size/d.BlockSize + 1
	case d.Type == splitaxes.Unstructured:
		var n int64
		for _, ix := range d.Indices {
			n += int64(len(ix))
		}
		return n
	}
	return 0
}

// addSat adds two counts, saturating at math.MaxInt64.
func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// validateArray checks an array spec: dtype, chunkings, that tasks and
// partitions match the grids and, unless precheck, that it plans.
func (s *Spec) validateArray(precheck bool) error {
	if _, err := rechunk.ParseDType(s.DType); err != nil {
		return fmt.Errorf("%w: shuffle %s: dtype: %w", ErrInvalid, s.ID, err)
	}
	if err := s.checkDists(); err != nil {
		return err
	}
	if !precheck {
		if _, err := s.Plan(); err != nil {
			return err
		}
	}
	tasks, parts := s.OldChunks.count(MaxTasks), s.NewChunks.count(MaxPartitions)
	if tasks < 0 || parts < 0 {
		return fmt.Errorf("%w: shuffle %s: too many chunks (at most %d old and %d new)", ErrInvalid, s.ID, MaxTasks, MaxPartitions)
	}
	if s.Tasks != tasks || s.Partitions != parts {
		return fmt.Errorf("%w: shuffle %s: tasks = %d and partitions = %d, but the chunk grids have %d old and %d new chunks",
			ErrInvalid, s.ID, s.Tasks, s.Partitions, tasks, parts)
	}
	return nil
}

// checkDists checks what planning needs before it allocates: one dist
// per axis where dists are given, and at most MaxRuns runs.
func (s *Spec) checkDists() error {
	nd := len(s.OldChunks)
	if len(s.NewChunks) != nd || (s.OldDist != nil && len(s.OldDist) != nd) || (s.NewDist != nil && len(s.NewDist) != nd) {
		return fmt.Errorf("%w: shuffle %s: %d old axes, %d new, %d old dists, %d new dists",
			ErrInvalid, s.ID, nd, len(s.NewChunks), len(s.OldDist), len(s.NewDist))
	}
	if r := s.Runs(); r > MaxRuns {
		return fmt.Errorf("%w: shuffle %s: its distributed axes make %d runs, at most %d (use larger cyclic blocks)",
			ErrInvalid, s.ID, r, MaxRuns)
	}
	return nil
}

// ArraySpec builds the spec of rechunking an array of dtype from old to new
// chunks; Tasks and Partitions are the chunk counts.
func ArraySpec(id, dtype string, old, new Chunks) *Spec {
	return &Spec{ID: id, Kind: Array, DType: dtype, OldChunks: old, NewChunks: new,
		Tasks: max(old.count(MaxTasks), 0), Partitions: max(new.count(MaxPartitions), 0)}
}
