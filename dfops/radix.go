package dfops

import (
	"cmp"
	"math"
	"math/bits"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/float16"
)

// radixMin is the fewest rows sorted as uint64 keys; fewer go to the
// comparison sort, which is as fast there.
const radixMin = 128

// passesMin is the fewest keys sorted by radix passes; fewer are sorted by
// slices.Sort, which is faster there (1.5-3x at 256 keys of 64 bits, where
// radix pays for up to 6 passes of 2048 counters).
const passesMin = 1024

// digitBits is the widest radix digit: 2^digitBits counters per pass.
const digitBits = 11

// maxPasses is the most digit passes a 64-bit key needs.
const maxPasses = (64 + digitBits - 1) / digitBits

// keySorter orders rows by unsigned 64-bit keys whose order is the rows'
// order, stably, with LSD radix passes. Missing rows (null, NaN) go last,
// in row order.
type keySorter struct {
	nulls arrow.Array // set when some row is null
	keys  []uint64    // keys of the present rows, then as much scratch
	out   []int32     // present rows from the front, missing rows from the back
	m     int         // present rows so far
	back  int         // first missing row's slot in out
}

// newKeySorter makes a sorter for the n rows of arr.
func newKeySorter(arr arrow.Array) *keySorter {
	n := arr.Len()
	s := &keySorter{keys: make([]uint64, 2*n), out: make([]int32, n), back: n}
	if arr.NullN() > 0 {
		s.nulls = arr
	}
	return s
}

func (s *keySorter) isNull(i int) bool { return s.nulls != nil && s.nulls.IsNull(i) }

// add takes row i with key k.
func (s *keySorter) add(i int, k uint64) {
	s.keys[s.m] = k
	s.out[s.m] = int32(i)
	s.m++
}

// skip takes row i as missing.
func (s *keySorter) skip(i int) {
	s.back--
	s.out[s.back] = int32(i)
}

// radixIndices returns SortIndices' order of arr by radix sort, or false
// when arr's type has no fixed-width numeric key.
func radixIndices(arr arrow.Array) ([]int32, bool) {
	fill := keyFiller(arr)
	if fill == nil {
		return nil, false
	}
	s := newKeySorter(arr)
	fill(s)
	return s.sort(), true
}

// keyFiller returns what adds arr's rows to a sorter, or nil.
func keyFiller(arr arrow.Array) func(*keySorter) {
	switch a := arr.(type) {
	case *array.Int8:
		return func(s *keySorter) { signedKeys(s, a.Int8Values()) }
	case *array.Int16:
		return func(s *keySorter) { signedKeys(s, a.Int16Values()) }
	case *array.Int32:
		return func(s *keySorter) { signedKeys(s, a.Int32Values()) }
	case *array.Int64:
		return func(s *keySorter) { signedKeys(s, a.Int64Values()) }
	case *array.Date32:
		return func(s *keySorter) { signedKeys(s, a.Date32Values()) }
	case *array.Date64:
		return func(s *keySorter) { signedKeys(s, a.Date64Values()) }
	case *array.Timestamp:
		return func(s *keySorter) { signedKeys(s, a.TimestampValues()) }
	}
	return otherFiller(arr)
}

// otherFiller is keyFiller for unsigned, bool and float arrays.
func otherFiller(arr arrow.Array) func(*keySorter) {
	switch a := arr.(type) {
	case *array.Uint8:
		return func(s *keySorter) { unsignedKeys(s, a.Uint8Values()) }
	case *array.Uint16:
		return func(s *keySorter) { unsignedKeys(s, a.Uint16Values()) }
	case *array.Uint32:
		return func(s *keySorter) { unsignedKeys(s, a.Uint32Values()) }
	case *array.Uint64:
		return func(s *keySorter) { unsignedKeys(s, a.Uint64Values()) }
	case *array.Boolean:
		return func(s *keySorter) { boolKeys(s, a) }
	case *array.Float16:
		return func(s *keySorter) { half(s, a.Values()) }
	case *array.Float32:
		return func(s *keySorter) { floatKeys(s, a.Float32Values()) }
	case *array.Float64:
		return func(s *keySorter) { floatKeys(s, a.Float64Values()) }
	}
	return nil
}

// signedKeys adds signed values, their sign bit flipped so that unsigned
// order is signed order.
func signedKeys[T int8 | int16 | int32 | int64 | arrow.Date32 | arrow.Date64 | arrow.Timestamp](s *keySorter, v []T) {
	for i, x := range v {
		if s.isNull(i) {
			s.skip(i)
			continue
		}
		s.add(i, uint64(int64(x))^(1<<63))
	}
}

// unsignedKeys adds unsigned values as they are.
func unsignedKeys[T uint8 | uint16 | uint32 | uint64](s *keySorter, v []T) {
	for i, x := range v {
		if s.isNull(i) {
			s.skip(i)
			continue
		}
		s.add(i, uint64(x))
	}
}

// boolKeys adds false as 0 and true as 1.
func boolKeys(s *keySorter, a *array.Boolean) {
	for i := range a.Len() {
		switch {
		case a.IsNull(i):
			s.skip(i)
		case a.Value(i):
			s.add(i, 1)
		default:
			s.add(i, 0)
		}
	}
}

// floatKeys adds float values by floatRadixKey; NaN is missing.
func floatKeys[T float32 | float64](s *keySorter, v []T) {
	for i, x := range v {
		f := float64(x)
		if f != f || s.isNull(i) {
			s.skip(i)
			continue
		}
		s.add(i, floatRadixKey(f))
	}
}

// half is floatKeys for float16 values.
func half(s *keySorter, v []float16.Num) {
	for i, x := range v {
		f := float64(x.Float32())
		if f != f || s.isNull(i) {
			s.skip(i)
			continue
		}
		s.add(i, floatRadixKey(f))
	}
}

// floatRadixKey maps a float that is not NaN to a key in the same order, -0
// equal to +0: a negative's bits all flipped, a positive's sign bit set.
func floatRadixKey(f float64) uint64 {
	if f == 0 {
		f = 0 // -0 compares equal to +0
	}
	b := math.Float64bits(f)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

// sort returns the rows in key order, then the missing rows.
func (s *keySorter) sort() []int32 {
	slices.Reverse(s.out[s.back:])
	keys, idx := s.keys[:s.m], s.out[:s.m]
	lo, hi := bounds(keys)
	width, rowBits := bits.Len64(hi-lo), bits.Len(uint(len(s.out)))
	if width+rowBits <= 64 {
		sortPacked(keys, s.keys[s.m:2*s.m], idx, lo, width, uint(rowBits))
	} else {
		sortWide(keys, s.keys[s.m:2*s.m], idx, lo, width)
	}
	return s.out
}

// bounds returns the least and greatest key (0, 0 when there are none).
func bounds(keys []uint64) (lo, hi uint64) {
	if len(keys) == 0 {
		return 0, 0
	}
	lo, hi = keys[0], keys[0]
	for _, k := range keys {
		lo, hi = min(lo, k), max(hi, k)
	}
	return lo, hi
}

// sortPacked sorts keys that differ from lo in their low width bits only,
// each packed above its row (of rowBits bits), width+rowBits <= 64, so
// that a pass moves one word per row; the rows end in idx.
func sortPacked(keys, tmp []uint64, idx []int32, lo uint64, width int, rowBits uint) {
	for i, k := range keys {
		keys[i] = (k-lo)<<rowBits | uint64(idx[i])
	}
	keys, _ = radixPasses(keys, tmp, rowBits, width)
	mask := uint64(1)<<rowBits - 1
	for i, k := range keys {
		idx[i] = int32(k & mask)
	}
}

// sortWide sorts keys too wide to pack beside their rows: it sorts the
// keys' top bits packed above each key's position j, then each run of
// equal top bits by the whole key, and puts the rows, idx, in that order.
func sortWide(keys, tmp []uint64, idx []int32, lo uint64, width int) {
	jBits := uint(bits.Len(uint(len(keys))))
	drop := uint(width) + jBits - 64
	packed := make([]uint64, len(keys))
	for j, k := range keys {
		packed[j] = (k-lo)>>drop<<jBits | uint64(j)
	}
	packed, free := radixPasses(packed, tmp, jBits, 64-int(jBits))
	mask := uint64(1)<<jBits - 1
	sortRuns(packed, keys, jBits)
	for i, p := range packed {
		free[i] = uint64(idx[p&mask])
	}
	for i, r := range free {
		idx[i] = int32(r)
	}
}

// sortRuns sorts each run of packed words with equal bits above jBits by
// keys[j], ties by j, where j is a word's low jBits.
func sortRuns(packed, keys []uint64, jBits uint) {
	mask := uint64(1)<<jBits - 1
	byKey := func(a, b uint64) int {
		if c := cmp.Compare(keys[a&mask], keys[b&mask]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	}
	for i := 0; i < len(packed); {
		e := i + 1
		for e < len(packed) && packed[e]>>jBits == packed[i]>>jBits {
			e++
		}
		if run := packed[i:e]; len(run) > 1 && !slices.IsSortedFunc(run, byKey) {
			slices.SortFunc(run, byKey)
		}
		i = e
	}
}

// radixPasses sorts keys, whose bits below base are unique, by their width
// bits from bit base up, in passes between keys and tmp, and returns the
// sorted buffer and the other one.
func radixPasses(keys, tmp []uint64, base uint, width int) (sorted, free []uint64) {
	if len(keys) < passesMin {
		slices.Sort(keys) // the bits below base keep equal keys stable
		return keys, tmp
	}
	w, passes := digits(width)
	var count [maxPasses << digitBits]int32
	histograms(keys, base, w, passes, &count)
	for p := range passes {
		c, shift := count[p<<w:(p+1)<<w], base+uint(p)*w
		if !trivial(keys, c, shift) {
			scatter(keys, tmp, shift, c)
			keys, tmp = tmp, keys
		}
	}
	return keys, tmp
}

// trivial reports whether every key has the same digit at shift, whose
// counts are c.
func trivial(keys []uint64, c []int32, shift uint) bool {
	return c[keys[0]>>shift&uint64(len(c)-1)] == int32(len(keys))
}

// digits splits a key of width bits into the fewest passes of at most
// digitBits each, as even as can be.
func digits(width int) (w uint, passes int) {
	passes = (width + digitBits - 1) / digitBits
	if passes == 0 {
		return 1, 0
	}
	return uint((width + passes - 1) / passes), passes
}

// histograms counts each pass's digits of keys from bit base up, pass p's
// at count[p<<w:].
func histograms(keys []uint64, base, w uint, passes int, count *[maxPasses << digitBits]int32) {
	mask := uint64(1)<<w - 1
	for _, k := range keys {
		k >>= base
		for p := range passes {
			count[p<<w+int(k>>(uint(p)*w)&mask)]++
		}
	}
}

// offsets turns c's counts into each digit's first slot.
func offsets(c []int32) {
	var sum int32
	for d, n := range c {
		c[d] = sum
		sum += n
	}
}

// scatter moves keys to dst stably by the digit at shift, whose counts
// are c.
func scatter(keys, dst []uint64, shift uint, c []int32) {
	offsets(c)
	mask := uint64(len(c) - 1)
	for _, k := range keys {
		d := k >> shift & mask
		dst[c[d]] = k
		c[d]++
	}
}
