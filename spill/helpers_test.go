package spill

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// releaseLog counts Release calls per value and flags double releases.
type releaseLog struct {
	mu       sync.Mutex
	released map[int]int
	next     int
	t        testing.TB
}

// newID returns a fresh value ID: 0, 1, 2...
func (r *releaseLog) newID() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.next++
	return r.next - 1
}

func newReleaseLog(t testing.TB) *releaseLog {
	return &releaseLog{released: map[int]int{}, t: t}
}

func (r *releaseLog) release(id int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.released[id]++
	if r.released[id] > 1 {
		r.t.Errorf("value %d released %d times", id, r.released[id])
	}
}

func (r *releaseLog) count(id int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.released[id]
}

// checkAll asserts that each of ids was released exactly once.
func (r *releaseLog) checkAll(t testing.TB, ids []int) {
	t.Helper()
	for _, id := range ids {
		if n := r.count(id); n != 1 {
			t.Errorf("value %d released %d times, want 1", id, n)
		}
	}
}

// testValue is a Value backed by a byte slice.
type testValue struct {
	id          int
	data        []byte
	log         *releaseLog
	failMarshal bool
}

func (v *testValue) Size() int64 { return int64(len(v.data)) }

func (v *testValue) MarshalSpill() ([]byte, error) {
	if v.failMarshal {
		return nil, errors.New("cannot marshal")
	}
	if v.log != nil && v.log.count(v.id) > 0 {
		return nil, fmt.Errorf("value %d marshalled after release", v.id)
	}
	return v.data, nil
}

func (v *testValue) Release() {
	if v.log != nil {
		v.log.release(v.id)
	}
}

// appendValue is a testValue that also implements SpillAppender, as the service's pieces do.
type appendValue struct{ *testValue }

func (v appendValue) AppendSpill(dst []byte) ([]byte, error) {
	data, err := v.MarshalSpill()
	return append(dst, data...), err
}

// pieceData builds deterministic contents for a piece: its key, then filler.
func pieceData(shuffle string, k Key, size int) []byte {
	b := make([]byte, size)
	seed := fmt.Sprintf("%s/%d/%d/%d/%d|", shuffle, k.Partition, k.Task, k.Attempt, k.Seq)
	for i := range b {
		b[i] = seed[i%len(seed)]
	}
	return b
}

// got is one piece returned by Scan.
type got struct {
	Key    Key
	Data   []byte
	OnDisk bool
}

// scanAll scans one partition, copying what it sees and checking that exactly one of mem
// and disk is set.
func scanAll(t testing.TB, s *Store, shuffle string, partition uint32) []got {
	t.Helper()
	var out []got
	err := s.Scan(shuffle, partition, func(k Key, mem Value, disk []byte) error {
		if (mem == nil) == (disk == nil) {
			return fmt.Errorf("%v: mem set %v, disk set %v", k, mem != nil, disk != nil)
		}
		if disk != nil {
			out = append(out, got{Key: k, Data: bytes.Clone(disk), OnDisk: true})
			return nil
		}
		data, err := mem.MarshalSpill()
		out = append(out, got{Key: k, Data: bytes.Clone(data)})
		return err
	})
	if err != nil {
		t.Fatalf("Scan(%q, %d): %v", shuffle, partition, err)
	}
	return out
}

// sameData compares scan results with the expected pieces, ignoring where they were held.
func sameData(gotPieces, want []got) error {
	if len(gotPieces) != len(want) {
		return fmt.Errorf("got %d pieces, want %d", len(gotPieces), len(want))
	}
	for i := range want {
		if gotPieces[i].Key != want[i].Key {
			return fmt.Errorf("piece %d: key %v, want %v", i, gotPieces[i].Key, want[i].Key)
		}
		if !bytes.Equal(gotPieces[i].Data, want[i].Data) {
			return fmt.Errorf("piece %d (%v): %d bytes differ from the %d put", i, want[i].Key,
				len(gotPieces[i].Data), len(want[i].Data))
		}
	}
	return nil
}

// sortGot sorts expected pieces in Key order.
func sortGot(g []got) {
	slices.SortFunc(g, func(a, b got) int { return a.Key.Compare(b.Key) })
}

// openStore opens a store and closes it at the end of the test.
func openStore(t testing.TB, cfg Config) *Store {
	t.Helper()
	s, err := Open(cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// memDisk is an in-memory Disk for tests.
type memDisk struct {
	mu     sync.Mutex
	data   map[string][]byte
	closed bool
}

func newMemDisk() *memDisk { return &memDisk{data: map[string][]byte{}} }

func (d *memDisk) WriteBatch(entries []Entry) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, e := range entries {
		d.data[string(e.Key)] = bytes.Clone(e.Value)
	}
	return nil
}

func (d *memDisk) Scan(prefix []byte, fn func(key, value []byte) error) error {
	d.mu.Lock()
	var keys []string
	for k := range d.data {
		if strings.HasPrefix(k, string(prefix)) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	vals := make([][]byte, len(keys))
	for i, k := range keys {
		vals[i] = d.data[k]
	}
	d.mu.Unlock()
	for i, k := range keys {
		if err := fn([]byte(k), vals[i]); err != nil {
			return err
		}
	}
	return nil
}

func (d *memDisk) DropPrefix(prefix []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for k := range d.data {
		if strings.HasPrefix(k, string(prefix)) {
			delete(d.data, k)
		}
	}
	return nil
}

func (d *memDisk) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	return nil
}

func (d *memDisk) len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.data)
}

// faultDisk wraps a Disk and fails WriteBatch calls: the failAt-th call (1-based), and every
// later one while persistent is set. partial makes a failing call write the first half of its
// entries before it fails, as a crashed badger batch might.
type faultDisk struct {
	Disk
	mu         sync.Mutex
	calls      int
	failAt     int
	persistent bool
	partial    bool
	failures   int
}

// errNoSpace is what a full disk returns.
var errNoSpace = &os.PathError{Op: "write", Path: "000001.vlog", Err: syscall.ENOSPC}

func (d *faultDisk) WriteBatch(entries []Entry) error {
	if !d.fail() {
		return d.Disk.WriteBatch(entries)
	}
	if d.partial && len(entries) > 1 {
		if err := d.Disk.WriteBatch(entries[:len(entries)/2]); err != nil {
			return err
		}
	}
	return errNoSpace
}

func (d *faultDisk) fail() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls++
	f := d.calls == d.failAt || (d.persistent && d.failAt > 0 && d.calls > d.failAt)
	if f {
		d.failures++
	}
	return f
}

// heal stops a persistent fault.
func (d *faultDisk) heal() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.persistent = false
}
