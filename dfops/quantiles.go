package dfops

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
)

// ErrEmptySample means a Sample holds no value to choose divisions from (the
// column is empty or all null).
var ErrEmptySample = errors.New("dfops: no non-null value sampled")

// Quantiles returns n-1 ascending divisions that cut the weighted sample
// into n parts of about equal weight: division i is the first value (in
// ascending order) at which the cumulative weight exceeds i/n of the total.
// weights, if not nil, has one positive weight per value (nil means 1 each).
// NaN values and values of zero weight are ignored. Divisions may be equal
// when a value holds more than 1/n of the weight: the range rule then leaves
// the partitions between them empty, so the count asked for is kept. An
// empty sample or n < 2 gives nil. sample and weights are not modified.
func Quantiles[T cmp.Ordered](sample []T, weights []float64, n int) []T {
	items, total := weighted(sample, weights)
	if len(items) == 0 || n < 2 {
		return nil
	}
	slices.SortFunc(items, func(a, b weightedValue[T]) int { return cmp.Compare(a.v, b.v) })
	divs := make([]T, 0, n-1)
	k, cum := 0, 0.0
	for i := 1; i < n; i++ {
		t := total * float64(i) / float64(n)
		for k < len(items)-1 && cum+items[k].w <= t {
			cum += items[k].w
			k++
		}
		divs = append(divs, items[k].v)
	}
	return divs
}

type weightedValue[T cmp.Ordered] struct {
	v T
	w float64
}

// weighted pairs values with weights, dropping NaNs and non-positive weights.
func weighted[T cmp.Ordered](sample []T, weights []float64) ([]weightedValue[T], float64) {
	items := make([]weightedValue[T], 0, len(sample))
	total := 0.0
	for i, v := range sample {
		w := 1.0
		if weights != nil {
			w = weights[i]
		}
		if v != v || !(w > 0) { // v != v only for NaN
			continue
		}
		items = append(items, weightedValue[T]{v, w})
		total += w
	}
	return items, total
}

// Sample collects values of one column, from many arrays (one per input
// file, say), to choose range divisions for it. Each array contributes up to
// k values chosen by stratified sampling (one at a random row of each of k
// equal slices, from a seeded generator: deterministic), each weighted by
// the rows it stands for, so large and small files count in proportion.
// Nulls and NaNs are not sampled (they go to the last partition anyway).
// A Sample is not safe for concurrent use.
type Sample struct {
	dt      arrow.DataType
	ints    []int64
	uints   []uint64
	floats  []float64
	strs    []string
	weights []float64
}

// NewSample returns an empty Sample for a column of type dt: an integer,
// float, bool, string, binary, date or timestamp type.
func NewSample(dt arrow.DataType) (*Sample, error) {
	if familyOf(dt) == famNone {
		return nil, fmt.Errorf("%w: cannot choose divisions for %s", ErrUnsupportedType, dt)
	}
	return &Sample{dt: dt}, nil
}

// Len is the number of values held.
func (s *Sample) Len() int { return len(s.weights) }

// Add samples up to k rows of col (every row when it has at most k), with
// the generator seeded by seed. col must have the Sample's type. It returns
// the number of values taken.
func (s *Sample) Add(col arrow.Array, k int, seed uint64) (int, error) {
	return s.AddChunks([]arrow.Array{col}, k, seed)
}

// AddChunks is Add of the column whose rows are those of chunks, in order
// (a file's column read batch by batch), without joining them first.
func (s *Sample) AddChunks(chunks []arrow.Array, k int, seed uint64) (int, error) {
	n := 0
	for _, c := range chunks {
		if !arrow.TypeEqual(c.DataType(), s.dt) {
			return 0, fmt.Errorf("%w: sample of %s given %s", ErrUnsupportedType, s.dt, c.DataType())
		}
		n += c.Len()
	}
	if k <= 0 || n == 0 {
		return 0, nil
	}
	if n <= k {
		return s.addRows(chunks, 1, func(j int) int { return j }, n), nil
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	pick := func(j int) int { lo := j * n / k; return lo + rng.IntN((j+1)*n/k-lo) }
	return s.addRows(chunks, float64(n)/float64(k), pick, k), nil
}

// addRows takes rows pick(0..count-1), ascending, of the column chunks
// make up that are not missing, each of weight w.
func (s *Sample) addRows(chunks []arrow.Array, w float64, pick func(int) int, count int) int {
	taken, c, off := 0, 0, 0 // chunks[c] holds rows from off
	take := s.taker(chunks[0])
	for j := range count {
		i := pick(j)
		for i >= off+chunks[c].Len() {
			off += chunks[c].Len()
			c++
			take = s.taker(chunks[c])
		}
		if col := chunks[c]; !col.IsNull(i-off) && take(i-off) {
			s.weights = append(s.weights, w)
			taken++
		}
	}
	return taken
}

// taker returns a function that appends row i of col to the sample (false
// when the value is a NaN, which is not taken).
func (s *Sample) taker(col arrow.Array) func(int) bool {
	if at, ok := intAt(col); ok {
		return func(i int) bool { s.ints = append(s.ints, at(i)); return true }
	}
	if at, ok := uintAt(col); ok {
		return func(i int) bool { s.uints = append(s.uints, at(i)); return true }
	}
	if at, ok := floatAt(col); ok {
		return func(i int) bool {
			v := at(i)
			if math.IsNaN(v) {
				return false
			}
			s.floats = append(s.floats, v)
			return true
		}
	}
	strs := stringsOf(col)
	return func(i int) bool { s.strs = append(s.strs, strings.Clone(strs[i])); return true }
}

// Divisions returns n-1 ascending divisions (Quantiles of the sample) as
// the JSON values of a range rule of package table: numbers (dates and
// timestamps in their stored unit), true/false, or strings. String and binary
// values that are not valid UTF-8, and infinite floats, cannot be JSON
// divisions: they are left out of the sample. An empty sample gives
// ErrEmptySample.
func (s *Sample) Divisions(n int) ([]json.RawMessage, error) {
	var divs []json.RawMessage
	switch {
	case s.ints != nil:
		divs = encode(Quantiles(s.ints, s.weights, n), func(v int64) []byte { return strconv.AppendInt(nil, v, 10) })
	case s.uints != nil && s.dt.ID() == arrow.BOOL:
		divs = encode(Quantiles(s.uints, s.weights, n), func(v uint64) []byte { return strconv.AppendBool(nil, v == 1) })
	case s.uints != nil:
		divs = encode(Quantiles(s.uints, s.weights, n), func(v uint64) []byte { return strconv.AppendUint(nil, v, 10) })
	case s.floats != nil:
		v, w := keep(s.floats, s.weights, func(f float64) bool { return !math.IsInf(f, 0) })
		divs = encode(Quantiles(v, w, n), func(f float64) []byte { return strconv.AppendFloat(nil, f, 'g', -1, 64) })
	case s.strs != nil:
		v, w := keep(s.strs, s.weights, utf8.ValidString)
		divs = encode(Quantiles(v, w, n), func(x string) []byte { b, _ := json.Marshal(x); return b })
	}
	if len(divs) == 0 && n >= 2 {
		return nil, fmt.Errorf("%w: %s column", ErrEmptySample, s.dt)
	}
	return divs, nil
}

func encode[T any](vals []T, enc func(T) []byte) []json.RawMessage {
	out := make([]json.RawMessage, len(vals))
	for i, v := range vals {
		out[i] = enc(v)
	}
	return out
}

// keep returns the values (and their weights) for which ok holds.
func keep[T any](vals []T, weights []float64, ok func(T) bool) ([]T, []float64) {
	var v []T
	var w []float64
	for i, x := range vals {
		if ok(x) {
			v, w = append(v, x), append(w, weights[i])
		}
	}
	return v, w
}
