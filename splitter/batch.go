package splitter

import (
	"github.com/shufflenode/shufflenode/shard"
	"github.com/shufflenode/shufflenode/wire"
)

// entrySize is what an entry costs the memory budget.
func entrySize(e *shard.Entry) int64 { return int64(e.Len()) + 16*int64(len(e.Runs)) + 32 }

// End is an end-of-task marker (shard.End) with the callback that learns
// whether it arrived.
type End struct {
	shard.End
	// Done is called once, from a splitter goroutine, when the message
	// carrying the marker and every message queued before it to the same
	// destination were acknowledged (nil), or with the first error among
	// them. So nil means the receiver has every entry sent before the
	// marker, even though several messages are in flight at once (a busy
	// receiver may take an earlier one after a later one).
	Done func(error)
}

// Batch is one message to one destination: entries and end markers of one
// shuffle and epoch. The Sender must not retain it after Send returns.
type Batch struct {
	Shuffle string
	Epoch   uint64
	Dest    string
	Entries []shard.Entry
	Ends    []End
	bytes   int64
	// releases free the data of entries (Splitter.AddReleased) once the
	// batch was sent or failed for good.
	releases []func()
	seq      uint64 // its place in its queue
	err      error  // how its send ended
	// lingered is set when its first end marker waited Config.Linger.
	lingered bool
}

// Msg returns the batch as the shard message that carries it (entries are
// shared, not copied).
func (b *Batch) Msg() *shard.Msg {
	m := &shard.Msg{Shuffle: b.Shuffle, Epoch: b.Epoch, Entries: b.Entries, Ends: make([]shard.End, len(b.Ends))}
	for i, e := range b.Ends {
		m.Ends[i] = e.End
	}
	return m
}

// Payload returns the batch as the payload of the shards frame that
// carries it, in parts that share the entries' data (shard.MsgPayload):
// valid until Send returns.
func (b *Batch) Payload() wire.Payload { return shard.MsgPayload(b.Msg()) }

// finish completes every End of b with err.
func (b *Batch) finish(err error) {
	for _, e := range b.Ends {
		if e.Done != nil {
			e.Done(err)
		}
	}
}
