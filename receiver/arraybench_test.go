package receiver

import (
	"context"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/shufflenode/shufflenode/rechunk"
	"github.com/shufflenode/shufflenode/shard"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/spill"
	"github.com/shufflenode/shufflenode/splitaxes"
)

// BenchmarkReceiveTinyPieces receives a (1000, 1000) f8 array rechunked
// from rows to columns ((1, 1000) -> (1000, 1) chunks) on one node: 1000
// messages of one entry with 1000 pieces of one element each, the shape of
// bench scale's 10,000 x 10,000 array case; then it seals and reads every
// new chunk (which checks each placed piece's commit). ns/piece is the
// receive and the read together.
func BenchmarkReceiveTinyPieces(b *testing.B) {
	const n = 1000
	msgs := tinyPieceMsgs(b, n)
	b.SetBytes(n * n * 8)
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		rc, sh := tinyPieceReceiver(b, n)
		b.StartTimer()
		ctx := context.Background()
		for _, m := range msgs {
			if err := rc.Receive(ctx, sh, m); err != nil {
				b.Fatal(err)
			}
		}
		sh.Finish(shuffle.Sealed, nil)
		for p := range n {
			if _, err := rc.GetChunk(ctx, sh, p); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		rc.cfg.Store.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(n*n), "ns/piece")
}

// tinyPieceReceiver is a receiver and its shuffle of the (1, n) -> (n, 1)
// rechunk of an (n, n) f8 array on one node.
func tinyPieceReceiver(b *testing.B, n int64) (*Receiver, *Shuffle) {
	store, err := spill.Open(spill.Config{MemoryLimit: 4 * n * n * 8})
	if err != nil {
		b.Fatal(err)
	}
	sp := &spec.Spec{ID: "s", Kind: spec.Array, Tasks: int(n), Partitions: int(n), DType: "<f8",
		OldChunks: spec.Chunks{slices.Repeat([]int64{1}, int(n)), {n}}, NewChunks: spec.Chunks{{n}, slices.Repeat([]int64{1}, int(n))}}
	st, err := shuffle.New(sp, "a", []string{"a"}, nil, "a")
	if err != nil {
		b.Fatal(err)
	}
	rc := New(Config{Store: store, OutputBatchRows: 1024, Allocator: memory.DefaultAllocator,
		Committed: func(*shuffle.State, Commit) {}})
	return rc, NewShuffle(st, nil)
}

// tinyPieceMsgs are the messages of every old chunk of the (1, n) -> (n, 1)
// rechunk: one entry of n one-element pieces and the end marker each.
func tinyPieceMsgs(b *testing.B, n int64) []*shard.Msg {
	dt, err := rechunk.ParseDType("<f8")
	if err != nil {
		b.Fatal(err)
	}
	msgs := make([]*shard.Msg, n)
	for t := range n {
		row := rechunk.Chunk{DType: dt, Shape: []int64{1, n}, Data: make([]byte, n*8)}
		var data []byte
		runs := make([]shard.Run, n)
		for p := range n {
			start := len(data)
			if data, err = rechunk.AppendPiece(data, row, []splitaxes.Slice{{Start: 0, Stop: 1}, {Start: p, Stop: p + 1}}); err != nil {
				b.Fatal(err)
			}
			runs[p] = shard.Run{Partition: uint32(p), Count: uint64(len(data) - start)}
		}
		e := shard.Entry{Task: uint64(t), Runs: runs, Data: data}
		msgs[t] = &shard.Msg{Shuffle: "s", Entries: []shard.Entry{e}, Ends: []shard.End{{Task: uint64(t), Pieces: 1}}}
	}
	return msgs
}
