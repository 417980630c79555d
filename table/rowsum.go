package table

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
)

// nullHash is the hash of a null value in a row sum: distinct from the hash
// of any value's canonical form with overwhelming probability.
const nullHash = 0x6A09E667F3BCC909

// RowSums is the order-independent content checksum of a set of rows, kept
// per output partition: the number of rows and the sum (modulo 2^64) of one
// hash per row over every column, so two attempts that produced the same rows
// in any order have equal sums, and attempts that produced different rows
// differ with overwhelming probability. The zero value is empty; grow it
// with Add. A row's hash is fmix64(S ^ (((h0*S + h1)*S + h2)...)), where
// hc is column c's canonical hash and S the hash seed.
type RowSums struct {
	Rows []uint64 // by partition
	Sums []uint64 // by partition
}

// Add adds the rows of rec to the sums of their partitions (pids[i] is row
// i's partition, as Partitioner.Partition wrote it). The sums grow to cover
// every partition named. A row's hash folds in every column's canonical hash
// (the partitioning hash's forms, see the package documentation), with
// nullHash for a null value, in column order.
func (s *RowSums) Add(rec arrow.Record, pids []uint32) error {
	return addRowHashes(rec, pids, s.addBlock)
}

// addRowHashes hashes the rows of rec (see RowSums.Add) a block at a time
// and hands each block's partition ids and row hashes to add.
func addRowHashes(rec arrow.Record, pids []uint32, add func(pids []uint32, hashes []uint64)) error {
	if int64(len(pids)) != rec.NumRows() {
		return fmt.Errorf("%w: %d partition ids for %d rows", ErrBadInput, len(pids), rec.NumRows())
	}
	types, err := rowTypes(rec)
	if err != nil {
		return err
	}
	// scratch for a block: sized for the rows, since it escapes to the heap
	// (add keeps no reference) and a task of 160 rows allocated two blocks
	// of hashBlock words
	n := min(hashBlock, len(pids))
	scratch := make([]uint64, 2*n)
	buf, col := scratch[:n], scratch[n:]
	for lo := 0; lo < len(pids); lo += hashBlock {
		acc := buf[:min(hashBlock, len(pids)-lo)]
		for c, ct := range types {
			hashRowColumn(rec.Column(c), ct, lo, col[:len(acc)], acc, c > 0)
		}
		add(pids[lo:lo+len(acc)], acc)
	}
	return nil
}

// rowTypes classifies every column of rec, refusing an unsupported type.
func rowTypes(rec arrow.Record) ([]colType, error) {
	types := make([]colType, rec.NumCols())
	for c := range types {
		ct, ok := typeOf(rec.Column(c).DataType())
		if !ok {
			return nil, fmt.Errorf("%w: column %q of type %s", ErrUnsupportedType, rec.Schema().Field(c).Name, rec.Column(c).DataType())
		}
		types[c] = ct
	}
	return types, nil
}

// hashRowColumn hashes rows [lo, lo+len(acc)) of arr into col, sets null
// rows to nullHash, and folds col into acc (or copies it when combine is
// false) as acc*S + col: column hashes are mixed already, and the order of
// the columns still counts.
func hashRowColumn(arr arrow.Array, ct colType, lo int, col, acc []uint64, combine bool) {
	hashColumn(arr, ct, lo, col, false)
	if bitmap, off := validity(arr); bitmap != nil {
		for i := range col {
			if !isValid(bitmap, off, lo+i) {
				col[i] = nullHash
			}
		}
	}
	if !combine {
		copy(acc, col)
		return
	}
	for i, h := range col {
		acc[i] = acc[i]*hashSeed + h // no mix per column: the row's last mix (addBlock) does it
	}
}

// addBlock adds one block of row hashes to their partitions.
func (s *RowSums) addBlock(pids []uint32, hashes []uint64) {
	for i, p := range pids {
		if int(p) >= len(s.Sums) {
			s.grow(int(p) + 1)
		}
		s.Rows[p]++
		s.Sums[p] += fmix64(hashes[i] ^ hashSeed) // a last mix, so sums of related rows do not cancel
	}
}

// grow extends the sums to n partitions.
func (s *RowSums) grow(n int) {
	s.Rows = append(s.Rows, make([]uint64, n-len(s.Rows))...)
	s.Sums = append(s.Sums, make([]uint64, n-len(s.Sums))...)
}

// sortByPartition sorts the sums by partition: a radix sort when there are
// many (a task's rows over 10,000 partitions: its comparison sort was 3% of
// the 10,000 x 10,000 demo's CPU).
func (s *SparseRowSums) sortByPartition() {
	if len(s.sums) < 256 {
		slices.SortFunc(s.sums, func(a, b PartRowSum) int { return cmp.Compare(a.Partition, b.Partition) })
		return
	}
	keys := make([]uint64, len(s.sums))
	var top uint32
	for i, e := range s.sums {
		keys[i] = uint64(e.Partition)
		top = max(top, e.Partition)
	}
	order := sortedRows(keys, bits.Len32(top))
	sorted := make([]PartRowSum, len(s.sums))
	for i, k := range order {
		sorted[i] = s.sums[k]
	}
	s.sums = sorted
}

// Of returns the rows and sum of partition p (zeros when no row went there).
func (s *RowSums) Of(p int) (rows, sum uint64) {
	if p < 0 || p >= len(s.Sums) {
		return 0, 0
	}
	return s.Rows[p], s.Sums[p]
}

// SparseRowSums is RowSums holding only the partitions that got rows: the
// sums of an input task that reaches few of many partitions (a shuffle
// with more partitions than the task has rows) cost its rows, not the
// partitions (dense sums of a 10,000-partition shuffle allocated and
// cleared 160 kB per task). Rows are appended as they come and compacted
// (sorted by partition, each partition's summed) when they have doubled
// since the last compaction, so its size stays within about twice the
// partitions that got rows. The zero value is empty.
//
// A task of many rows is better served by one entry per partition
// (Dense): appending and sorting a task's rows cost about 7% of the
// in-process demo's CPU at 500 partitions (2026-11-28), and 12% of the
// nodes' CPU at 1,000 tasks x 100,000 partitions. A task of few rows is
// not: the entries of 1,000 partitions are a scan of 12 kB for a task of
// a few rows, so the entries are used only when the first record has at
// least a row for every 32 partitions. They come from a pool and go back
// to it cleared as they are read, so a task allocates none.
type SparseRowSums struct {
	denseN    int          // Dense's n, until the first Add decides
	dense     *denseSums   // Dense: by partition, until compact
	denseRows uint64       // rows added to dense
	sums      []PartRowSum // partitions outside dense, and all after compact
	compacted int          // sums[:compacted] are ascending, one per partition
}

// denseSums are the rows and sums of partitions 0..len(rows)-1, zero where
// no row went.
type denseSums struct {
	rows []uint32
	sums []uint64
}

// densePool holds cleared denseSums.
var densePool sync.Pool

// getDense returns cleared denseSums of n partitions.
func getDense(n int) *denseSums {
	if d, ok := densePool.Get().(*denseSums); ok && cap(d.rows) >= n {
		d.rows, d.sums = d.rows[:n], d.sums[:n]
		return d
	}
	return &denseSums{rows: make([]uint32, n), sums: make([]uint64, n)}
}

// MaxDenseRowSums is the most partitions Dense keeps an entry for each
// (12 bytes a partition).
const MaxDenseRowSums = 1 << 17

// Dense makes empty sums keep one entry for each of n partitions (at most
// MaxDenseRowSums; more are ignored): a row then costs an addition, not an
// append and its share of a sort. A partition outside n is kept sparse.
func (s *SparseRowSums) Dense(n int) {
	if n > 0 && n <= MaxDenseRowSums && len(s.sums) == 0 {
		s.denseN = n
	}
}

// PartRowSum is the rows and sum of one partition (SparseRowSums).
type PartRowSum struct {
	Partition uint32
	Rows, Sum uint64
}

// Add adds the rows of rec to the sums of their partitions, as RowSums.Add.
func (s *SparseRowSums) Add(rec arrow.Record, pids []uint32) error {
	if s.denseN > 0 {
		if len(pids)*32 >= s.denseN {
			s.dense = getDense(s.denseN)
		}
		s.denseN = 0
	}
	if s.dense != nil && s.denseRows+uint64(len(pids)) > math.MaxUint32 {
		s.compact() // a partition's count could overflow: sparse from now on
	}
	return addRowHashes(rec, pids, s.addBlock)
}

func (s *SparseRowSums) addBlock(pids []uint32, hashes []uint64) {
	var rows []uint32 // none without dense entries: every row is appended
	var sums []uint64
	if d := s.dense; d != nil {
		rows, sums = d.rows, d.sums
		s.denseRows += uint64(len(pids))
	}
	for i, p := range pids {
		h := fmix64(hashes[i] ^ hashSeed)
		if int(p) < len(rows) {
			rows[p]++
			sums[p] += h
			continue
		}
		s.sums = append(s.sums, PartRowSum{Partition: p, Rows: 1, Sum: h})
	}
	if len(s.sums) >= 2*s.compacted+4096 {
		s.compact()
	}
}

// compact sorts the sums by partition and merges each partition's; the
// dense entries, read and cleared, go back to their pool.
func (s *SparseRowSums) compact() {
	if d := s.dense; d != nil { // from now on sparse
		sorted := len(s.sums) == 0
		s.sums = slices.Grow(s.sums, int(min(s.denseRows, uint64(len(d.rows)))))
		for p, n := range d.rows {
			if n > 0 {
				s.sums = append(s.sums, PartRowSum{Partition: uint32(p), Rows: uint64(n), Sum: d.sums[p]})
				d.rows[p], d.sums[p] = 0, 0
			}
		}
		s.dense, s.denseN = nil, 0
		densePool.Put(d)
		if sorted { // only dense entries: ascending, one per partition
			s.compacted = len(s.sums)
		}
	}
	if s.compacted == len(s.sums) {
		return
	}
	s.sortByPartition()
	out := s.sums[:0]
	for _, e := range s.sums {
		if n := len(out); n > 0 && out[n-1].Partition == e.Partition {
			out[n-1].Rows += e.Rows
			out[n-1].Sum += e.Sum
			continue
		}
		out = append(out, e)
	}
	s.sums, s.compacted = out, len(out)
}

// Of returns the rows and sum of partition p (zeros when no row went there).
func (s *SparseRowSums) Of(p uint32) (rows, sum uint64) {
	s.compact()
	k, ok := slices.BinarySearchFunc(s.sums, p, func(e PartRowSum, p uint32) int { return cmp.Compare(e.Partition, p) })
	if !ok {
		return 0, 0
	}
	return s.sums[k].Rows, s.sums[k].Sum
}

// Len is the number of partitions that got rows.
func (s *SparseRowSums) Len() int {
	s.compact()
	return len(s.sums)
}

// Each calls fn with the rows and sum of every partition that got rows, in
// ascending partition order.
func (s *SparseRowSums) Each(fn func(p uint32, rows, sum uint64)) {
	s.compact()
	for _, e := range s.sums {
		fn(e.Partition, e.Rows, e.Sum)
	}
}
