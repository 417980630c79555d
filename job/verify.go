package job

import (
	"fmt"
	"math/bits"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/shufflenode/shufflenode/table"
)

// Verifier checks a dataframe shuffle's output against its input without
// trusting the service: every row ID seen exactly once, each in the
// partition the partitioner assigns to its key, and the per-partition row
// count and key checksum equal to what the input implies.
type Verifier struct {
	mu       sync.Mutex // Input and Output may be called from several goroutines
	part     *table.Partitioner
	seen     []uint64 // bit id of word id/64: row id arrived (a bit, not a bool: 8x less memory to miss the cache in)
	rows     int64
	idCol    int
	wantRows []int64
	wantSum  []uint64
	gotRows  []int64
	gotSum   []uint64
	keyCol   int
}

// NewVerifier builds the expected per-partition totals from the input
// records (total rows, IDs 0..rows-1 in column idCol, key in keyCol).
func NewVerifier(part *table.Partitioner, rows int64, idCol, keyCol int) *Verifier {
	p := part.Partitions()
	return &Verifier{part: part, seen: make([]uint64, (rows+63)/64), rows: rows, idCol: idCol, keyCol: keyCol,
		wantRows: make([]int64, p), wantSum: make([]uint64, p), gotRows: make([]int64, p), gotSum: make([]uint64, p)}
}

// Input accounts for one input record. Safe to call concurrently.
func (v *Verifier) Input(rec arrow.Record) error {
	pids, err := v.part.Partition(rec, nil)
	if err != nil {
		return err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	keys := rec.Column(v.keyCol).(*array.Int64)
	for i, p := range pids {
		v.wantRows[p]++
		v.wantSum[p] += uint64(keys.Value(i))*2654435761 + 1
	}
	return nil
}

// Output accounts for one output record read from partition p. Safe to
// call concurrently: the keys are partitioned before the lock is taken.
func (v *Verifier) Output(p int, rec arrow.Record) error {
	pids, err := v.part.Partition(rec, nil)
	if err != nil {
		return err
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	ids := rec.Column(v.idCol).(*array.Int64)
	keys := rec.Column(v.keyCol).(*array.Int64)
	for i, q := range pids {
		id := ids.Value(i)
		if id < 0 || id >= v.rows {
			return fmt.Errorf("partition %d: row id %d out of range", p, id)
		}
		w, bit := id/64, uint64(1)<<(id%64)
		if v.seen[w]&bit != 0 {
			return fmt.Errorf("partition %d: row id %d seen twice", p, id)
		}
		v.seen[w] |= bit
		if int(q) != p {
			return fmt.Errorf("row id %d read from partition %d, its key maps to %d", id, p, q)
		}
		v.gotRows[p]++
		v.gotSum[p] += uint64(keys.Value(i))*2654435761 + 1
	}
	return nil
}

// Check reports the first missing row or per-partition mismatch.
func (v *Verifier) Check() error {
	for w, got := range v.seen {
		want := ^uint64(0)
		if left := v.rows - int64(w)*64; left < 64 {
			want = 1<<left - 1
		}
		if missing := want &^ got; missing != 0 {
			return fmt.Errorf("row id %d never arrived", w*64+bits.TrailingZeros64(missing))
		}
	}
	for p := range v.wantRows {
		if v.wantRows[p] != v.gotRows[p] || v.wantSum[p] != v.gotSum[p] {
			return fmt.Errorf("partition %d: %d rows (key sum %x), want %d (%x)", p, v.gotRows[p], v.gotSum[p], v.wantRows[p], v.wantSum[p])
		}
	}
	return nil
}
