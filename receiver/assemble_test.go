package receiver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/spill"
	"github.com/shufflenode/shufflenode/wire"
)

// TestAssemblyOnArrival: pieces are placed as they arrive (the store holds
// none of them and charges the chunk's size), a resent piece is accepted
// once, and the read hands out the assembled chunk.
func TestAssemblyOnArrival(t *testing.T) {
	f := newFixture(t, []string{"a"}, []int64{4})
	ctx := context.Background()
	for task := range uint64(2) {
		for range 2 {
			if err := f.rc.Receive(ctx, f.sh, oldChunk(t, 0, task)); err != nil {
				t.Fatal(err)
			}
		}
	}
	a := f.sh.assembled(0)
	if a == nil || a.asm.Placed() != 2 {
		t.Fatalf("assembly of new chunk 0: %+v, want both pieces placed once", a)
	}
	var olds [][]int
	for old := range a.asm.PlacedOld() {
		olds = append(olds, slices.Clone(old))
	}
	if fmt.Sprint(olds) != "[[0] [1]]" {
		t.Fatalf("placed old chunks %v, want [[0] [1]]", olds)
	}
	if st := f.rc.cfg.Store.Stats(); st.MemoryPieces != 0 || st.MemoryBytes != 4 {
		t.Fatalf("store %+v: want no pieces and the chunk's 4 bytes reserved", st)
	}
	f.sh.Finish(shuffle.Sealed, nil)
	c, err := f.rc.GetChunk(ctx, f.sh, 0)
	if err != nil || !slices.Equal(c.Data, []byte{0, 1, 10, 11}) {
		t.Fatalf("GetChunk = %v, %v; want [0 1 10 11]", c.Data, err)
	}
}

// TestAssemblyRefusesDifferentBytes: a second attempt of a task whose piece
// differs from the placed one is refused loudly, and the chunk keeps the
// first attempt's bytes.
func TestAssemblyRefusesDifferentBytes(t *testing.T) {
	f := newFixture(t, []string{"a"}, []int64{4})
	ctx := context.Background()
	if err := f.rc.Receive(ctx, f.sh, oldChunk(t, 0, 1)); err != nil {
		t.Fatal(err)
	}
	other := oldChunk(t, 0, 1)
	other.Entries[0].Attempt, other.Ends[0].Attempt = 1, 1
	other.Entries[0].Data[len(other.Entries[0].Data)-1] = 99
	var r *shuffle.Refusal
	if err := f.rc.Receive(ctx, f.sh, other); !errors.As(err, &r) || r.Code != wire.RefuseFailed {
		t.Fatalf("different bytes from attempt 1: %v, want a refusal (failed)", err)
	}
}

// TestAssemblyWithoutBudget: with no room to reserve a chunk the pieces are
// stored, and the read places them as before.
func TestAssemblyWithoutBudget(t *testing.T) {
	f := newFixture(t, []string{"a"}, []int64{4})
	store, err := spill.Open(spill.Config{MemoryLimit: 1 << 20, Dir: t.TempDir()}) // pieces can spill
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	f.rc.cfg.Store = store
	ctx := context.Background()
	if !store.Reserve("other", 1<<19) { // all the budget reservations may take
		t.Fatal("cannot take the budget")
	}
	for task := range uint64(2) {
		if err := f.rc.Receive(ctx, f.sh, oldChunk(t, 0, task)); err != nil {
			t.Fatal(err)
		}
	}
	if f.sh.assembled(0) != nil {
		t.Fatal("an assembly started without budget")
	}
	f.sh.Finish(shuffle.Sealed, nil)
	c, err := f.rc.GetChunk(ctx, f.sh, 0)
	if err != nil || !slices.Equal(c.Data, []byte{0, 1, 10, 11}) {
		t.Fatalf("GetChunk = %v, %v; want [0 1 10 11]", c.Data, err)
	}
}

// TestReceiveKept: pieces placed into an assembly are copies, so the
// receiver reports that it kept nothing of the message and the caller may
// reuse its bytes (overwriting them here changes nothing read later).
func TestReceiveKept(t *testing.T) {
	f := newFixture(t, []string{"a"}, []int64{4})
	ctx := context.Background()
	for task := range uint64(2) {
		m := oldChunk(t, 0, task)
		kept, err := f.rc.receiveKept(ctx, f.sh, m)
		if err != nil || kept {
			t.Fatalf("task %d: kept %v, err %v; want nothing kept", task, kept, err)
		}
		clear(m.Entries[0].Data) // as a recycled payload would be
	}
	f.sh.Finish(shuffle.Sealed, nil)
	c, err := f.rc.GetChunk(ctx, f.sh, 0)
	if err != nil || !slices.Equal(c.Data, []byte{0, 1, 10, 11}) {
		t.Fatalf("GetChunk = %v, %v; want [0 1 10 11]", c.Data, err)
	}
}
