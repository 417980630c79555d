package receiver

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/shard"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/spill"
	"github.com/shufflenode/shufflenode/splitaxes"
	"github.com/shufflenode/shufflenode/wire"
)

// fixture is a receiver on node "a" of a 1-d byte array of 4 elements in
// two old chunks of 2, rechunked into newChunks.
type fixture struct {
	rc      *Receiver
	sh      *Shuffle
	commits []Commit
}

func newFixture(t *testing.T, members []string, newChunks []int64) *fixture {
	t.Helper()
	sp := &spec.Spec{ID: "s", Kind: spec.Array, Tasks: 2, Partitions: len(newChunks), DType: "|u1",
		OldChunks: spec.Chunks{{2, 2}}, NewChunks: spec.Chunks{newChunks}}
	return newFixtureOf(t, sp, members)
}

// newFixtureOf is a receiver on node "a" of shuffle sp among members,
// with a store of 1 MiB in memory.
func newFixtureOf(t *testing.T, sp *spec.Spec, members []string) *fixture {
	t.Helper()
	store, err := spill.Open(spill.Config{MemoryLimit: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	st, err := shuffle.New(sp, "a", members, nil, "a")
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{sh: NewShuffle(st, nil)}
	f.rc = New(Config{Store: store, OutputBatchRows: 1024, Allocator: memory.DefaultAllocator,
		Committed: func(_ *shuffle.State, c Commit) { f.commits = append(f.commits, c) }})
	return f
}

// oldChunk is the message that puts old chunk task (bytes 10*task, 10*task+1)
// into new chunk 0 whole.
func oldChunk(t *testing.T, epoch, task uint64) *shard.Msg {
	t.Helper()
	dt, err := rechunk.ParseDType("|u1")
	if err != nil {
		t.Fatal(err)
	}
	c := rechunk.Chunk{DType: dt, Shape: []int64{2}, Data: []byte{byte(10 * task), byte(10*task + 1)}}
	piece, err := rechunk.AppendPiece(nil, c, []splitaxes.Slice{{Start: 0, Stop: 2}})
	if err != nil {
		t.Fatal(err)
	}
	e := shard.Entry{Task: task, Runs: []shard.Run{{Partition: 0, Count: uint64(len(piece))}}, Data: piece}
	return &shard.Msg{Shuffle: "s", Epoch: epoch, Entries: []shard.Entry{e}, Ends: []shard.End{{Task: task, Pieces: 1}}}
}

func TestReceiveCommitsOnceAndReads(t *testing.T) {
	f := newFixture(t, []string{"a"}, []int64{4})
	ctx := context.Background()
	for task := range uint64(2) {
		for range 2 { // the second copy is a resend: stored and committed once
			if err := f.rc.Receive(ctx, f.sh, oldChunk(t, 0, task)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(f.commits) != 2 {
		t.Fatalf("commits = %+v, want one per task", f.commits)
	}
	if _, err := f.rc.GetChunk(ctx, f.sh, 0); !errors.Is(err, shuffle.ErrNotSealed) {
		t.Fatalf("GetChunk before the seal: %v, want ErrNotSealed", err)
	}
	f.sh.Finish(shuffle.Sealed, nil)
	c, err := f.rc.GetChunk(ctx, f.sh, 0)
	if err != nil || !slices.Equal(c.Data, []byte{0, 1, 10, 11}) {
		t.Fatalf("GetChunk = %v, %v; want [0 1 10 11]", c.Data, err)
	}
	if got, want := f.sh.Reads(), (ReadStats{Rows: 1, Bytes: 4, Reads: 1}); got != want {
		t.Errorf("reads %+v, want %+v (the read refused before the seal counts nothing)", got, want)
	}
}

func TestReceiveChecksTheEpoch(t *testing.T) {
	f := newFixture(t, []string{"a", "b"}, []int64{2, 2})
	moveEpoch(t, f.sh.State, "b")
	err := f.rc.Receive(context.Background(), f.sh, oldChunk(t, 0, 0))
	var r *shuffle.Refusal
	if !errors.As(err, &r) || r.Code != wire.RefuseStaleEpoch {
		t.Errorf("message of an older epoch: %v, want a stale-epoch refusal", err)
	}
	var b *shuffle.Busy
	if err := f.rc.Receive(context.Background(), f.sh, oldChunk(t, 2, 0)); !errors.As(err, &b) {
		t.Errorf("message of a newer epoch: %v, want busy", err)
	}
}

// An attempt whose data arrived in an epoch that moved on before it was
// complete never commits: the check and the move share the shuffle's lock.
func TestOlderEpochNeverCommits(t *testing.T) {
	f := newFixture(t, []string{"a", "b"}, []int64{2, 2})
	rs := &attempt{epoch: 0, end: &shard.End{}}
	moveEpoch(t, f.sh.State, "b")
	f.sh.Lock()
	defer f.sh.Unlock()
	k := shuffle.AttemptKey{}
	if c := f.sh.tryCommit(k, rs); c != nil {
		t.Fatalf("attempt of epoch 0 committed in epoch 1: %+v", c)
	}
	rs.epoch = 1
	if c := f.sh.tryCommit(k, rs); c == nil || c.Epoch != 1 {
		t.Fatalf("attempt of epoch 1 did not commit: %+v", c)
	}
}

// moveEpoch moves st to the epoch without lost.
func moveEpoch(t *testing.T, st *shuffle.State, lost string) {
	t.Helper()
	st.Lock()
	defer st.Unlock()
	rt, err := st.RouteFor([]string{lost})
	if err != nil {
		t.Fatal(err)
	}
	st.SetRouteLocked(rt)
}
