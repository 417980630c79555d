package spill

import "testing"

// TestReserve: reservations count against the budget and in the shuffle's
// memory, never past the budget, and go away with Unreserve or DropShuffle.
func TestReserve(t *testing.T) {
	s := openStore(t, Config{MemoryLimit: 2000, Node: "n1", Disk: newMemDisk()})
	if !s.Reserve("a", 600) || s.Reserve("a", 500) {
		t.Fatal("want 600 reserved and 500 more refused (past half the budget of 2000)")
	}
	if !s.Reserve("b", 400) {
		t.Fatal("400 more fit exactly in half the budget")
	}
	if st := s.Stats(); st.MemoryBytes != 1000 || st.MemoryPieces != 0 {
		t.Fatalf("stats %+v, want 1000 bytes, 0 pieces", st)
	}
	s.Unreserve("a", 100)
	if err := s.DropShuffle("b"); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.MemoryBytes != 500 {
		t.Fatalf("after Unreserve(100) and dropping b: %d bytes, want 500", st.MemoryBytes)
	}
	if !s.Reserve("c", 500) {
		t.Fatal("dropping b gave its reservation back: 500 more fit")
	}
	s.Unreserve("c", 500)
	s.Unreserve("b", 400) // dropped: nothing to give back
	s.Unreserve("a", 10_000)
	if st := s.Stats(); st.MemoryBytes != 0 {
		t.Fatalf("after giving everything back: %d bytes, want 0", st.MemoryBytes)
	}
	if s.Reserve("a", -1) || s.Reserve("", 1) {
		t.Fatal("a negative size or an empty shuffle ID was reserved")
	}
}

// TestCharge: Charge may go past the budget; the next Put then spills.
func TestCharge(t *testing.T) {
	log := newReleaseLog(t)
	s := openStore(t, Config{MemoryLimit: 100, Node: "n1", Disk: newMemDisk()})
	s.Charge("a", 150) // a shuffle the store does not know: nothing
	if st := s.Stats(); st.MemoryBytes != 0 {
		t.Fatalf("charged an unknown shuffle: %d bytes", st.MemoryBytes)
	}
	if !s.Reserve("a", 0) {
		t.Fatal("reserving nothing failed")
	}
	s.Charge("a", 150)
	if st := s.Stats(); st.MemoryBytes != 150 {
		t.Fatalf("charged: %d bytes, want 150", st.MemoryBytes)
	}
	k := Key{Partition: 1}
	if err := s.Put("b", k, &testValue{id: log.newID(), data: pieceData("b", k, 10), log: log}); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.SpilledPieces != 1 {
		t.Fatalf("the put over budget did not spill: %+v", st)
	}
	s.Unreserve("a", 150)
	if st := s.Stats(); st.MemoryBytes != 0 {
		t.Fatalf("after Unreserve: %d bytes", st.MemoryBytes)
	}
}
