package spec

import (
	"errors"
	"math"
	"testing"

	"github.com/shufflenode/shufflenode/splitaxes"
)

// cyclicSpec is a 1-d array of blocks blocks of size 1 dealt to 4 old
// chunks, rechunked into one new chunk.
func cyclicSpec(blocks int64) *Spec {
	return &Spec{ID: "cyc", Kind: Array, DType: "<f8", Tasks: 4, Partitions: 1,
		OldChunks: Chunks{splitaxes.CyclicSizes(blocks, 4, 1)}, NewChunks: Chunks{{blocks}},
		OldDist: []*splitaxes.Dist{{Type: splitaxes.Cyclic, Size: blocks, BlockSize: 1}}}
}

func TestRuns(t *testing.T) {
	for _, tc := range []struct {
		name string
		sp   *Spec
		want int64
	}{
		{"regular axes plan no runs", ArraySpec("r", "<f8", Chunks{{2, 2}}, Chunks{{4}}), 0},
		{"cyclic: a run per block plus the new side's chunk", cyclicSpec(1000), 1000 + 1 + 1},
		{"block side: a run per chunk", &Spec{OldChunks: Chunks{{3, 3}}, NewChunks: Chunks{{6}},
			NewDist: []*splitaxes.Dist{{Type: splitaxes.Block, Size: 6, Starts: []int64{0}}}}, 3},
		{"unstructured: at most a run per index", &Spec{OldChunks: Chunks{{2, 1}}, NewChunks: Chunks{{3}},
			OldDist: []*splitaxes.Dist{{Type: splitaxes.Unstructured, Size: 3, Indices: [][]int64{{0, 2}, {1}}}}}, 4},
		{"saturates", &Spec{OldChunks: Chunks{{1}, {1}}, NewChunks: Chunks{{1}, {1}}, OldDist: []*splitaxes.Dist{
			{Type: splitaxes.Cyclic, Size: math.MaxInt64, BlockSize: 1}, {Type: splitaxes.Cyclic, Size: math.MaxInt64, BlockSize: 1}}}, math.MaxInt64},
		{"malformed dists count nothing", &Spec{OldChunks: Chunks{{1}}, NewChunks: Chunks{{1}},
			OldDist: []*splitaxes.Dist{{Type: splitaxes.Cyclic, Size: 10}}}, 1},
		{"dists shorter than the axes", &Spec{OldChunks: Chunks{{1}, {1}}, NewChunks: Chunks{{1}, {1}},
			OldDist: []*splitaxes.Dist{{Type: splitaxes.Cyclic, Size: 1, BlockSize: 1}}}, 2 + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.sp.Runs(); got != tc.want {
				t.Fatalf("Runs = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestRunsBoundPlans checks Runs against the plan it bounds: planning a
// cyclic spec builds no more runs per side than Runs counts.
func TestRunsBoundPlans(t *testing.T) {
	for _, blocks := range []int64{1, 7, 64, 1000} {
		sp := cyclicSpec(blocks)
		if _, err := sp.Validate(); err != nil {
			t.Fatalf("%d blocks: %v", blocks, err)
		}
		runs, err := splitaxes.CyclicRuns(blocks, 4, 1)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(runs))+1 > sp.Runs() {
			t.Fatalf("%d blocks: %d runs planned, Runs says %d", blocks, len(runs)+1, sp.Runs())
		}
	}
}

// TestPrecheckRefusesBeforePlanning: a 231-byte spec of 2^23 cyclic blocks
// is refused by its run count alone (planning it took 1.3-1.7 GiB), and
// one under the bound passes Precheck without being planned.
func TestPrecheckRefusesBeforePlanning(t *testing.T) {
	sp := cyclicSpec(1 << 23)
	sp.OldChunks = Chunks{{1 << 21, 1 << 21, 1 << 21, 1 << 21}}
	if _, err := sp.Precheck(); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Precheck of 2^23 blocks: %v, want ErrInvalid", err)
	}
	if _, err := sp.Validate(); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Validate of 2^23 blocks: %v, want ErrInvalid", err)
	}
	bad := cyclicSpec(1 << 20)
	bad.OldChunks[0][0]++ // the old chunks' sizes do not match the dist: only a plan finds out
	if _, err := bad.Precheck(); err != nil {
		t.Fatalf("Precheck: %v, want it to pass without planning", err)
	}
	if _, err := bad.Validate(); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Validate: %v, want ErrInvalid from planning", err)
	}
}

func TestPrecheckAxesMismatch(t *testing.T) {
	sp := cyclicSpec(8)
	sp.OldDist = append(sp.OldDist, nil)
	if _, err := sp.Precheck(); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Precheck: %v, want ErrInvalid", err)
	}
}
