package dfops

import (
	"fmt"
	"hash/maphash"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// keyCol is one key column in canonical form: fixed-width values as 64-bit
// words (integers sign- or zero-extended, floats as float64 bits with -0
// folded into 0, bools as 0/1, dates and timestamps as int64), byte strings
// as strings that alias the Arrow buffers.
type keyCol struct {
	words []uint64
	strs  []string
}

// keys is one side's key columns in canonical form, with a hash per row and
// whether the row has a missing key (null or NaN in any key column).
type keys struct {
	cols    []keyCol
	missing []bool
	hash    []uint64
	n       int
}

// newKeys canonicalises arrs (all of rows rows, of types that are
// pairwise equal with the other side's) and hashes every row with seed.
func newKeys(arrs []arrow.Array, rows int, seed maphash.Seed) (*keys, error) {
	k := &keys{n: rows, missing: make([]bool, rows), hash: make([]uint64, rows)}
	for _, a := range arrs {
		c, err := canonical(a, k.missing)
		if err != nil {
			return nil, err
		}
		k.cols = append(k.cols, c)
	}
	k.hashRows(seed)
	return k, nil
}

// canonical converts one key column and marks its missing rows.
func canonical(a arrow.Array, missing []bool) (keyCol, error) {
	for i := range a.Len() {
		if a.IsNull(i) {
			missing[i] = true
		}
	}
	if s := stringsOf(a); s != nil {
		return keyCol{strs: s}, nil
	}
	w, err := wordsOf(a, missing)
	return keyCol{words: w}, err
}

// stringsOf returns the values of a string or binary array, nil for others.
func stringsOf(a arrow.Array) []string {
	at := stringAt(a)
	if at == nil {
		return nil
	}
	out := make([]string, a.Len())
	for i := range out {
		out[i] = at(i)
	}
	return out
}

// stringAt returns the values of a string or binary array as strings
// (sharing its bytes), or nil for another type.
func stringAt(a arrow.Array) func(int) string {
	switch a := a.(type) {
	case *array.String:
		return a.Value
	case *array.LargeString:
		return a.Value
	case *array.Binary:
		return a.ValueString
	case *array.LargeBinary:
		return a.ValueString
	}
	return nil
}

// wordsOf returns the canonical words of a fixed-width array; NaNs are
// marked missing.
func wordsOf(a arrow.Array, missing []bool) ([]uint64, error) {
	switch a := a.(type) {
	case *array.Int8:
		return signedWords(a.Int8Values()), nil
	case *array.Int16:
		return signedWords(a.Int16Values()), nil
	case *array.Int32:
		return signedWords(a.Int32Values()), nil
	case *array.Int64:
		return signedWords(a.Int64Values()), nil
	case *array.Date32:
		return signedWords(a.Date32Values()), nil
	case *array.Date64:
		return signedWords(a.Date64Values()), nil
	case *array.Timestamp:
		return signedWords(a.TimestampValues()), nil
	case *array.Uint8:
		return unsignedWords(a.Uint8Values()), nil
	case *array.Uint16:
		return unsignedWords(a.Uint16Values()), nil
	case *array.Uint32:
		return unsignedWords(a.Uint32Values()), nil
	case *array.Uint64:
		return unsignedWords(a.Uint64Values()), nil
	}
	return otherWords(a, missing)
}

// otherWords handles floats and bools.
func otherWords(a arrow.Array, missing []bool) ([]uint64, error) {
	switch a := a.(type) {
	case *array.Float16:
		return floatWords(a.Len(), func(i int) float64 { return float64(a.Value(i).Float32()) }, missing), nil
	case *array.Float32:
		return floatWords(a.Len(), func(i int) float64 { return float64(a.Value(i)) }, missing), nil
	case *array.Float64:
		return floatWords(a.Len(), a.Value, missing), nil
	case *array.Boolean:
		w := make([]uint64, a.Len())
		for i := range w {
			if a.Value(i) {
				w[i] = 1
			}
		}
		return w, nil
	}
	return nil, fmt.Errorf("%w: %s cannot be a key", ErrKeyType, a.DataType())
}

func signedWords[T int8 | int16 | int32 | int64 | arrow.Date32 | arrow.Date64 | arrow.Timestamp](v []T) []uint64 {
	w := make([]uint64, len(v))
	for i, x := range v {
		w[i] = uint64(int64(x))
	}
	return w
}

func unsignedWords[T uint8 | uint16 | uint32 | uint64](v []T) []uint64 {
	w := make([]uint64, len(v))
	for i, x := range v {
		w[i] = uint64(x)
	}
	return w
}

func floatWords(n int, at func(int) float64, missing []bool) []uint64 {
	w := make([]uint64, n)
	for i := range w {
		f := at(i)
		switch {
		case math.IsNaN(f):
			missing[i] = true
		case f == 0:
			w[i] = 0 // folds -0 into +0
		default:
			w[i] = math.Float64bits(f)
		}
	}
	return w
}

const hashMul = 0x9E3779B97F4A7C15

// fmix64 is MurmurHash3's 64-bit finaliser.
func fmix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xFF51AFD7ED558CCD
	h ^= h >> 33
	h *= 0xC4CEB9FE1A85EC53
	h ^= h >> 33
	return h
}

// hashRows hashes every row's key columns.
func (k *keys) hashRows(seed maphash.Seed) {
	for ci, c := range k.cols {
		for i := range k.n {
			v := uint64(0)
			if c.strs != nil {
				v = maphash.String(seed, c.strs[i])
			} else {
				v = c.words[i]
			}
			if ci == 0 {
				k.hash[i] = fmix64(v ^ hashMul)
			} else {
				k.hash[i] = fmix64(k.hash[i]*hashMul + v)
			}
		}
	}
}

// equal reports whether row i of k has the same key as row j of o.
func (k *keys) equal(i int32, o *keys, j int32) bool {
	for ci, c := range k.cols {
		oc := o.cols[ci]
		if c.strs != nil {
			if c.strs[i] != oc.strs[j] {
				return false
			}
		} else if c.words[i] != oc.words[j] {
			return false
		}
	}
	return true
}

// hashTable is a hash table over the rows of one side with a non-missing key:
// one slot per distinct key, holding its first row and its key's hash; next
// chains the rows of one key in ascending order. A probe compares keys only
// when the hashes are equal, so it reads one cache line of the table, and
// for a key of one fixed-width column (exact) not even that: its hash is a
// bijection of the key's word (fmix64 of the word xor a constant), so equal
// hashes are equal keys and the rows' keys are never read. (A probe of a
// table larger than the cache costs a miss per array it reads.)
type hashTable struct {
	k     *keys
	mask  uint64
	exact bool
	slots []slot
	next  []int32 // next row of the same key, -1 at the end
}

// slot is one hash table entry: its key's hash, row+1 of the key's first
// row (0: empty), and whether more rows have the key (only then does a probe
// read next, another miss).
type slot struct {
	hash uint64
	row  int32
	more bool
}

// buildTable indexes every row of k with a non-missing key.
func buildTable(k *keys) *hashTable {
	size := uint64(16)
	for size < 2*uint64(k.n) {
		size <<= 1
	}
	t := &hashTable{k: k, mask: size - 1, exact: len(k.cols) == 1 && k.cols[0].strs == nil,
		slots: make([]slot, size), next: make([]int32, k.n)}
	for r := int32(k.n) - 1; r >= 0; r-- { // backwards: chains end up ascending
		if !k.missing[r] {
			t.insert(r)
		}
	}
	return t
}

func (t *hashTable) insert(r int32) {
	h := t.k.hash[r]
	for s := h & t.mask; ; s = (s + 1) & t.mask {
		sl := t.slots[s]
		head := sl.row - 1
		if head < 0 {
			t.slots[s], t.next[r] = slot{hash: h, row: r + 1}, -1
			return
		}
		if sl.hash == h && (t.exact || t.k.equal(head, t.k, r)) {
			t.slots[s] = slot{hash: h, row: r + 1, more: true}
			t.next[r] = head
			return
		}
	}
}

// lookup returns the first row of t whose key equals row j of o, or -1,
// and whether more rows have that key (see after).
func (t *hashTable) lookup(o *keys, j int32) (int32, bool) {
	if o.missing[j] {
		return -1, false
	}
	h := o.hash[j]
	for s := h & t.mask; ; s = (s + 1) & t.mask {
		sl := t.slots[s]
		head := sl.row - 1
		if head < 0 {
			return -1, false
		}
		if sl.hash == h && (t.exact || t.k.equal(head, o, j)) {
			return head, sl.more
		}
	}
}

// after returns the row after r with r's key (-1 at the end), where more is
// what lookup said of the key.
func (t *hashTable) after(r int32, more bool) int32 {
	if !more {
		return -1
	}
	return t.next[r]
}
