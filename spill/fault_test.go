package spill

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"syscall"
	"testing"
)

// faultRun is the state of one fault-injection test: the puts that succeeded are expected
// back, the ones that failed must never appear.
type faultRun struct {
	t      *testing.T
	s      *Store
	log    *releaseLog
	want   map[string]map[uint32][]got
	failed int
	next   uint64
}

// put puts one piece and checks a failure's error.
func (r *faultRun) put(shuffle string, size int) {
	r.t.Helper()
	k := Key{Partition: uint32(r.next % 3), Task: r.next}
	r.next++
	id := r.log.newID()
	v := &testValue{id: id, data: pieceData(shuffle, k, size), log: r.log}
	if err := r.s.Put(shuffle, k, v); err != nil {
		r.checkDiskError(err, shuffle)
		if r.log.count(id) != 0 {
			r.t.Errorf("failed Put released its value: the caller owns it")
		}
		r.failed++
		return
	}
	if r.want[shuffle] == nil {
		r.want[shuffle] = map[uint32][]got{}
	}
	r.want[shuffle][k.Partition] = append(r.want[shuffle][k.Partition], got{Key: k, Data: v.data})
}

func (r *faultRun) checkDiskError(err error, shuffle string) {
	r.t.Helper()
	if !errors.Is(err, ErrDisk) || !errors.Is(err, syscall.ENOSPC) {
		r.t.Fatalf("Put error %v does not wrap ErrDisk and ENOSPC", err)
	}
	if msg := err.Error(); !strings.Contains(msg, fmt.Sprintf("shuffle %q", shuffle)) || !strings.Contains(msg, "node-3") {
		r.t.Errorf("error %q does not name shuffle %q and node-3", msg, shuffle)
	}
}

// TestDiskFault fails the Nth spill write (ENOSPC), once or until healed, optionally after
// half the batch reached the disk. Failed Puts report ErrDisk naming shuffle and node and keep
// their value; no piece is lost or duplicated; other shuffles keep working.
func TestDiskFault(t *testing.T) {
	cases := []struct {
		name       string
		failAt     int
		persistent bool
		partial    bool
	}{
		{"first write fails once", 1, false, false},
		{"third write fails once", 3, false, false},
		{"third write fails once after half landed", 3, false, true},
		{"disk full from the second write", 2, true, false},
		{"disk full after half landed", 2, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bd, err := openBadger(t.TempDir(), DefaultMemoryLimit, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			fd := &faultDisk{Disk: bd, failAt: tc.failAt, persistent: tc.persistent, partial: tc.partial}
			r := &faultRun{t: t, log: newReleaseLog(t), want: map[string]map[uint32][]got{}}
			r.s = openStore(t, Config{Disk: fd, MemoryLimit: 4000, SpillChunk: 1000, Node: "node-3"})
			for i := range 60 {
				if i%2 == 0 {
					r.put("victim", 500)
				} else {
					r.put("bystander", 50)
				}
			}
			if tc.persistent {
				recoverFromFullDisk(t, r, fd)
			} else if r.failed != 1 {
				t.Errorf("%d Puts failed, want 1", r.failed)
			}
			checkScans(t, r.s, r.want)
			if st := r.s.Stats(); st.SpillErrors != int64(fd.failures) {
				t.Errorf("SpillErrors = %d, disk failed %d writes", st.SpillErrors, fd.failures)
			}
		})
	}
}

// recoverFromFullDisk is what a receiver does when the disk fills: it fails and drops the
// shuffle that could not spill; other shuffles keep working in memory, and spill again once
// the disk has room.
func recoverFromFullDisk(t *testing.T, r *faultRun, fd *faultDisk) {
	if r.failed < 2 {
		t.Fatalf("%d Puts failed on a full disk, want several", r.failed)
	}
	if st := r.s.Stats(); st.MemoryBytes > st.MemoryLimit {
		t.Errorf("memory %d over budget %d: failed Puts must not keep their pieces", st.MemoryBytes, st.MemoryLimit)
	}
	if err := r.s.DropShuffle("victim"); err != nil {
		t.Fatal(err)
	}
	delete(r.want, "victim")
	failed := r.failed
	for range 10 {
		r.put("third", 100) // fits in memory: no spill needed
	}
	if r.failed != failed {
		t.Fatalf("%d Puts that fit in memory failed", r.failed-failed)
	}
	fd.heal()
	for range 20 {
		r.put("third", 500) // spills again, with the pieces that failed before
	}
	if r.failed != failed {
		t.Fatalf("%d Puts failed after the disk healed", r.failed-failed)
	}
	if st := r.s.Stats(); st.MemoryBytes > st.MemoryLimit {
		t.Errorf("memory %d still over budget %d after healing", st.MemoryBytes, st.MemoryLimit)
	}
}

// TestFailedSpillLeftovers makes a spill fail after its first group (tasks 0 and 1 of
// partition 0) reached the disk, then spills only task 1 again, in a group of its own: task 0
// is in memory and, stale, on disk; task 1 is on disk twice. Scan must return each once,
// task 0 from memory.
func TestFailedSpillLeftovers(t *testing.T) {
	fd := &faultDisk{Disk: newMemDisk(), failAt: 1, partial: true}
	log := newReleaseLog(t)
	s := openStore(t, Config{Disk: fd, MemoryLimit: 400, SpillChunk: 1, Node: "node-3"})
	want := putAll(t, s, log, []put{ // queue order: task 1 is the oldest
		{"s", Key{Task: 1}, 100}, {"s", Key{Task: 0}, 100},
		{"s", Key{Partition: 1, Task: 2}, 100}, {"s", Key{Partition: 1, Task: 3}, 100},
	})
	big := &testValue{id: 1000, data: make([]byte, 400), log: log}
	if err := s.Put("s", Key{Task: 9}, big); !errors.Is(err, ErrDisk) {
		t.Fatalf("Put = %v, want ErrDisk", err)
	}
	if n := fd.Disk.(*memDisk).len(); n != 1 {
		t.Fatalf("failed batch left %d groups on disk, want 1", n)
	}
	more := putAll(t, s, log, []put{{"s", Key{Task: 4}, 50}}) // spills task 1 only
	want["s"][0] = append(want["s"][0], more["s"][0]...)
	g := scanAll(t, s, "s", 0)
	if err := sameData(g, want["s"][0]); err != nil {
		t.Fatal(err)
	}
	if g[0].OnDisk || !g[1].OnDisk || g[2].OnDisk {
		t.Fatalf("tasks 0, 1, 4 on disk: %v %v %v; want false true false", g[0].OnDisk, g[1].OnDisk, g[2].OnDisk)
	}
}
