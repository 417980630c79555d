package splitaxes

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

const U = Unknown

// collect returns every split of every old chunk of a.
func collect(a *Axis) [][]Split {
	out := make([][]Split, a.NumOld())
	for i := range out {
		out[i] = slices.Collect(a.Splits(i))
	}
	return out
}

// tuples returns (new, split index, start, stop) per split per old chunk.
func tuples(a *Axis) [][][4]int64 {
	out := make([][][4]int64, a.NumOld())
	for i, ss := range collect(a) {
		out[i] = [][4]int64{}
		for _, s := range ss {
			out[i] = append(out[i], [4]int64{int64(s.NewChunk), int64(s.SplitIndex), s.Start, s.Stop})
		}
	}
	return out
}

func TestAxisRules(t *testing.T) {
	type tup = [4]int64
	tests := []struct {
		name     string
		old, new []int64
		want     [][]tup
	}{
		{"issue example", []int64{10, 10, 10, 10, 10}, []int64{25, 5, 20},
			[][]tup{{{0, 0, 0, 10}}, {{0, 1, 0, 10}}, {{0, 2, 0, 5}, {1, 0, 5, 10}}, {{2, 0, 0, 10}}, {{2, 1, 0, 10}}}},
		{"unchanged", []int64{3, 4}, []int64{3, 4}, [][]tup{{{0, 0, 0, 3}}, {{1, 0, 0, 4}}}},
		{"merge all", []int64{2, 3}, []int64{5}, [][]tup{{{0, 0, 0, 2}}, {{0, 1, 0, 3}}}},
		{"split one", []int64{5}, []int64{2, 2, 1}, [][]tup{{{0, 0, 0, 2}, {1, 0, 2, 4}, {2, 0, 4, 5}}}},
		{"zero old in middle", []int64{5, 0, 5}, []int64{10}, [][]tup{{{0, 0, 0, 5}}, {}, {{0, 1, 0, 5}}}},
		{"zero old at start", []int64{0, 5}, []int64{0, 5}, [][]tup{{}, {{0, 0, 0, 0}, {1, 0, 0, 5}}}},
		{"zero new inside old chunk", []int64{10}, []int64{3, 0, 7}, [][]tup{{{0, 0, 0, 3}, {1, 0, 3, 3}, {2, 0, 3, 10}}}},
		{"zero new at old boundary", []int64{5, 5}, []int64{5, 0, 5}, [][]tup{{{0, 0, 0, 5}}, {{1, 0, 0, 0}, {2, 0, 0, 5}}}},
		{"zero new at boundary after zero old", []int64{5, 0, 5}, []int64{5, 0, 5}, [][]tup{{{0, 0, 0, 5}}, {}, {{1, 0, 0, 0}, {2, 0, 0, 5}}}},
		{"zero new chunks at same offset", []int64{4}, []int64{2, 0, 0, 2}, [][]tup{{{0, 0, 0, 2}, {1, 0, 2, 2}, {2, 0, 2, 2}, {3, 0, 2, 4}}}},
		{"zero new at total", []int64{5}, []int64{5, 0}, [][]tup{{{0, 0, 0, 5}, {1, 0, 5, 5}}}},
		{"zero new at total after zero old", []int64{5, 0, 0}, []int64{5, 0}, [][]tup{{{0, 0, 0, 5}, {1, 0, 5, 5}}, {}, {}}},
		{"total zero", []int64{0, 0}, []int64{0}, [][]tup{{}, {}}},
		{"no chunks", []int64{}, []int64{}, [][]tup{}},
		{"no old chunks, zero new", []int64{}, []int64{0, 0}, [][]tup{}},
		{"unknown unchanged", []int64{U, U}, []int64{U, U}, [][]tup{{{0, 0, 0, U}}, {{1, 0, 0, U}}}},
		{"unknown mixed unchanged", []int64{U, 3, 0}, []int64{U, 3, 0}, [][]tup{{{0, 0, 0, U}}, {{1, 0, 0, 3}}, {{2, 0, 0, 0}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := NewAxis(tt.old, tt.new)
			if err != nil {
				t.Fatalf("NewAxis: %v", err)
			}
			if got := tuples(a); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("splits\n got %v\nwant %v", got, tt.want)
			}
			checkInverse(t, a)
		})
	}
}

func TestAxisErrors(t *testing.T) {
	tests := []struct {
		name     string
		old, new []int64
		want     error
	}{
		{"totals differ", []int64{5, 5}, []int64{9}, ErrTotalMismatch},
		{"totals differ, empty new", []int64{1}, []int64{}, ErrTotalMismatch},
		{"unknown merged", []int64{U, U}, []int64{U}, ErrUnknownChanged},
		{"unknown to known", []int64{U}, []int64{5}, ErrUnknownChanged},
		{"known to unknown", []int64{5}, []int64{U}, ErrUnknownChanged},
		{"unknown split differently", []int64{U, 4}, []int64{U, 2, 2}, ErrUnknownChanged},
		{"unknown moved", []int64{U, 4}, []int64{4, U}, ErrUnknownChanged},
		{"negative old", []int64{-2, 7}, []int64{5}, ErrBadSize},
		{"negative new", []int64{5}, []int64{7, -2}, ErrBadSize},
		{"overflow", []int64{math.MaxInt64, 1}, []int64{math.MaxInt64, 1}, ErrBadSize},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewAxis(tt.old, tt.new)
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
		})
	}
}

func TestNewNamesAxis(t *testing.T) {
	_, err := New([][]int64{{4}, {2, 2}, {U}}, [][]int64{{4}, {3}, {U}})
	if !errors.Is(err, ErrTotalMismatch) || !strings.Contains(err.Error(), "axis 1") {
		t.Fatalf("got %v, want ErrTotalMismatch naming axis 1", err)
	}
	_, err = New([][]int64{{4}, {U}}, [][]int64{{4}, {U, 0}})
	if !errors.Is(err, ErrUnknownChanged) || !strings.Contains(err.Error(), "axis 1") {
		t.Fatalf("got %v, want ErrUnknownChanged naming axis 1", err)
	}
	if _, err = New([][]int64{{4}}, [][]int64{{4}, {1}}); !errors.Is(err, ErrNDim) {
		t.Fatalf("got %v, want ErrNDim", err)
	}
}

// bruteForce is the O(C_old x C_new) reference: it intersects every old
// chunk with every new chunk, applies the zero-size rules literally, numbers
// the pieces of each new chunk, then stable-sorts each old chunk's splits by
// Start.
func bruteForce(old, new []int64) [][]Split {
	oldLo, total := refPrefix(old)
	newLo, _ := refPrefix(new)
	perOld := make([][]Split, len(old))
	for j := range new {
		ps := refPieces(old, oldLo, total, j, newLo[j], new[j])
		for k := range ps {
			ps[k].SplitIndex = k
			perOld[ps[k].OldChunk] = append(perOld[ps[k].OldChunk], ps[k])
		}
	}
	for i := range perOld {
		sort.SliceStable(perOld[i], func(a, b int) bool { return perOld[i][a].Start < perOld[i][b].Start })
	}
	return perOld
}

// refPieces returns the pieces of new chunk j spanning [lo, lo+n).
func refPieces(old, oldLo []int64, total int64, j int, lo, n int64) []Split {
	var ps []Split
	for i := range old {
		olo, ohi := oldLo[i], oldLo[i]+old[i]
		if n == 0 && olo <= lo && lo < ohi {
			return []Split{{OldChunk: i, NewChunk: j, Start: lo - olo, Stop: lo - olo}}
		}
		if s, e := max(olo, lo), min(ohi, lo+n); s < e {
			ps = append(ps, Split{OldChunk: i, NewChunk: j, Start: s - olo, Stop: e - olo, Offset: s - lo})
		}
	}
	for i := len(old) - 1; n == 0 && lo == total && i >= 0; i-- {
		if old[i] > 0 {
			return []Split{{OldChunk: i, NewChunk: j, Start: old[i], Stop: old[i]}}
		}
	}
	return ps
}

func refPrefix(sizes []int64) (lo []int64, total int64) {
	lo = make([]int64, len(sizes))
	for i, s := range sizes {
		lo[i] = total
		total += s
	}
	return lo, total
}

// randomChunking returns sizes adding up to total, with some zeros.
func randomChunking(r *rand.Rand, total int64, maxChunks int) []int64 {
	var out []int64
	for left := total; left > 0 || r.IntN(4) == 0; {
		if len(out) >= maxChunks {
			out = append(out, left)
			break
		}
		s := r.Int64N(min(left, 7) + 1)
		if r.IntN(5) == 0 {
			s = 0
		}
		out = append(out, s)
		left -= s
	}
	r.Shuffle(len(out), func(a, b int) { out[a], out[b] = out[b], out[a] })
	return out
}

func TestAxisAgainstBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 3000 {
		total := r.Int64N(30)
		old, new := randomChunking(r, total, 12), randomChunking(r, total, 12)
		a, err := NewAxis(old, new)
		if err != nil {
			t.Fatalf("case %d: NewAxis(%v, %v): %v", n, old, new, err)
		}
		want := bruteForce(old, new)
		if got := collect(a); !equalSplits(got, want) {
			t.Fatalf("case %d: old %v new %v\n got %v\nwant %v", n, old, new, got, want)
		}
		checkInverse(t, a)
	}
}

func equalSplits(got, want [][]Split) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if len(got[i]) != len(want[i]) || (len(got[i]) > 0 && !reflect.DeepEqual(got[i], want[i])) {
			return false
		}
	}
	return true
}

// checkInverse checks that Pieces is the inverse of Splits: the same splits
// regrouped by new chunk in split-index order, with SplitIndex agreeing, and
// that pieces of a known new chunk tile it exactly.
func checkInverse(t *testing.T, a *Axis) {
	t.Helper()
	byNew := make([][]Split, a.NumNew())
	for _, ss := range collect(a) {
		for _, s := range ss {
			byNew[s.NewChunk] = append(byNew[s.NewChunk], s)
		}
	}
	for j := range byNew {
		sort.Slice(byNew[j], func(x, y int) bool { return byNew[j][x].SplitIndex < byNew[j][y].SplitIndex })
		got := slices.Collect(a.Pieces(j))
		if a.NumPieces(j) != len(got) || !equalSplits([][]Split{got}, [][]Split{byNew[j]}) {
			t.Fatalf("new chunk %d: pieces %v, want %v", j, got, byNew[j])
		}
		checkTiling(t, a, got)
		lens, offs := a.Extents(j)
		if len(lens) != len(got) || len(offs) != len(got) {
			t.Fatalf("new chunk %d: extents of %d and %d pieces, want %d", j, len(lens), len(offs), len(got))
		}
		for k, s := range got {
			if lens[k] != s.Len() || offs[k] != s.Offset {
				t.Fatalf("new chunk %d piece %d: extent %d at %d, want %d at %d", j, k, lens[k], offs[k], s.Len(), s.Offset)
			}
		}
	}
}

func checkTiling(t *testing.T, a *Axis, ps []Split) {
	t.Helper()
	var off int64
	for k, s := range ps {
		if s.SplitIndex != k || (!s.OpenEnded() && s.Offset != off) {
			t.Fatalf("piece %d = %+v: want split index %d, offset %d", k, s, k, off)
		}
		if idx, ok := a.SplitIndex(s.OldChunk, s.NewChunk); !ok || idx != k {
			t.Fatalf("SplitIndex(%d, %d) = %d, %v; want %d", s.OldChunk, s.NewChunk, idx, ok, k)
		}
		off += max(s.Len(), 0)
	}
}

func TestAxisOutOfRange(t *testing.T) {
	a, err := NewAxis([]int64{2, 2}, []int64{4})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{-1, 2} {
		if a.NumSplits(k) != 0 || len(slices.Collect(a.Splits(k))) != 0 {
			t.Errorf("old %d: splits out of range", k)
		}
	}
	if a.NumPieces(1) != 0 || len(slices.Collect(a.Pieces(-1))) != 0 {
		t.Errorf("pieces out of range")
	}
	for _, j := range []int{-1, 1} {
		if lens, offs := a.Extents(j); lens != nil || offs != nil {
			t.Errorf("new chunk %d: extents %v %v out of range", j, lens, offs)
		}
	}
	if _, ok := a.SplitIndex(5, 0); ok {
		t.Errorf("SplitIndex(5, 0) ok")
	}
	if a.Total() != 4 || a.NumOld() != 2 || a.NumNew() != 1 {
		t.Errorf("Total %d NumOld %d NumNew %d", a.Total(), a.NumOld(), a.NumNew())
	}
}

func TestSplitsEarlyStop(t *testing.T) {
	a, err := NewAxis([]int64{10}, []int64{1, 2, 3, 4})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for range a.Splits(0) {
		if n++; n == 2 {
			break
		}
	}
	if n != 2 {
		t.Fatalf("iterated %d", n)
	}
}

// TestExtentsShared: Extents is built once, by whichever caller is first
// among many at once, and every caller gets the same memory.
func TestExtentsShared(t *testing.T) {
	a, err := NewAxis(slices.Repeat([]int64{10}, 100), slices.Repeat([]int64{100}, 10))
	if err != nil {
		t.Fatal(err)
	}
	got := make([][]int64, 8)
	var wg sync.WaitGroup
	for g := range got {
		wg.Go(func() { got[g], _ = a.Extents(3) })
	}
	wg.Wait()
	for g, lens := range got {
		if len(lens) != 10 || &lens[0] != &got[0][0] {
			t.Fatalf("caller %d: %d lengths at %p, want 10 at %p", g, len(lens), lens, got[0])
		}
	}
}
