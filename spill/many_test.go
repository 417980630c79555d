package spill

import (
	"errors"
	"slices"
	"testing"
)

// TestPutManyMatchesPut: the same pieces stored with PutMany (in groups, with
// duplicates inside a group and across groups) scan exactly as with Put, in
// memory, spilled to a memory disk and spilled to badger.
func TestPutManyMatchesPut(t *testing.T) {
	for _, tc := range []struct {
		name  string
		limit int64
		disk  string
	}{
		{"memory only", 1 << 20, ""},
		{"spills to a memory disk", 300, "mem"},
		{"spills to badger", 300, "badger"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{MemoryLimit: tc.limit, Node: "n1"}
			switch tc.disk {
			case "mem":
				cfg.Disk = newMemDisk()
			case "badger":
				cfg.Dir = t.TempDir()
			}
			log := newReleaseLog(t)
			s := openStore(t, cfg)
			want := map[uint32][]got{}
			for task := range uint64(6) {
				items, fresh := manyItems(log, task)
				// Item 0 again: a duplicate within the group.
				items = append(items, Item{Key: items[0].Key, Value: &testValue{id: log.newID(), data: []byte("dup"), log: log}})
				var dups []int
				if err := s.PutMany("a", items, func(i int) { dups = append(dups, i) }); err != nil {
					t.Fatalf("task %d: %v", task, err)
				}
				if !slices.Equal(dups, []int{len(items) - 1}) {
					t.Fatalf("task %d: duplicates %v, want [%d]", task, dups, len(items)-1)
				}
				items[len(items)-1].Value.Release() // the caller keeps a duplicate
				for _, g := range fresh {
					want[g.Key.Partition] = append(want[g.Key.Partition], g)
				}
				// The whole group again: every item is a duplicate.
				var again int
				if err := s.PutMany("a", items[:len(items)-1], func(int) { again++ }); err != nil || again != len(items)-1 {
					t.Fatalf("task %d resent: err %v, %d duplicates of %d", task, err, again, len(items)-1)
				}
			}
			for p, w := range want {
				sortGot(w)
				if err := sameData(scanAll(t, s, "a", p), w); err != nil {
					t.Errorf("partition %d: %v", p, err)
				}
			}
			if st := s.Stats(); st.MemoryPieces+st.SpilledPieces != 6*4 {
				t.Errorf("stats: %d in memory + %d spilled, want 24", st.MemoryPieces, st.SpilledPieces)
			}
		})
	}
}

// manyItems are the four pieces (partitions 0..3) of one entry of task.
func manyItems(log *releaseLog, task uint64) ([]Item, []got) {
	var items []Item
	var want []got
	for p := range uint32(4) {
		k := Key{Partition: p, Task: task}
		data := pieceData("a", k, 40+int(p))
		items = append(items, Item{Key: k, Value: &testValue{id: log.newID(), data: data, log: log}})
		want = append(want, got{Key: k, Data: data})
	}
	return items, want
}

// TestPutManyMemoryFullTakesNothing: a memory-only store refuses a group
// that does not fit as a whole, and the caller keeps every value.
func TestPutManyMemoryFullTakesNothing(t *testing.T) {
	log := newReleaseLog(t)
	s := openStore(t, Config{MemoryLimit: 100, Node: "n1"})
	items, _ := manyItems(log, 0)
	err := s.PutMany("a", items, func(int) { t.Fatal("no duplicate expected") })
	if !errors.Is(err, ErrMemoryFull) {
		t.Fatalf("err %v, want ErrMemoryFull", err)
	}
	if st := s.Stats(); st.MemoryPieces != 0 || st.MemoryBytes != 0 {
		t.Fatalf("a refused group left %d pieces, %d bytes", st.MemoryPieces, st.MemoryBytes)
	}
	for _, it := range items {
		it.Value.Release()
	}
}
