package splitter

import "github.com/shufflenode/shufflenode/barrier"

// Run says that Count units of an Entry's data belong to one output
// partition: rows for dataframes, bytes for array pieces. Runs of an Entry are
// stored in the order the data holds them.
type Run struct {
	Partition uint32
	Count     uint64
}

// Entry is the part of one input task attempt bound for one destination
// node: an encoded payload holding one or more output partitions. Seq numbers
// the entries of one (task, attempt, destination) from 0; receivers use
// (task, attempt, seq) to drop a resent entry.
type Entry struct {
	Task    uint64
	Attempt uint32
	Seq     uint32
	Runs    []Run
	Data    []byte // owned by the splitter after Add
}

// size is what an entry costs the memory budget.
func (e *Entry) size() int64 { return int64(len(e.Data)) + 16*int64(len(e.Runs)) + 32 }

// End is the end-of-task marker of one (task, attempt) for one destination:
// how many entries were sent to it and their totals. The receiver commits the
// attempt once it holds the marker and all Pieces entries.
type End struct {
	Task    uint64
	Attempt uint32
	Pieces  uint32
	Totals  barrier.Totals
	// Done is called once, from a splitter goroutine, when the message
	// carrying the marker was acknowledged (nil) or failed for good.
	Done func(error)
}

// Batch is one message to one destination: entries and end markers of one
// shuffle and epoch. The Sender must not retain it after Send returns.
type Batch struct {
	Shuffle string
	Epoch   uint64
	Dest    string
	Entries []Entry
	Ends    []End
	bytes   int64
}

// finish completes every End of b with err.
func (b *Batch) finish(err error) {
	for _, e := range b.Ends {
		if e.Done != nil {
			e.Done(err)
		}
	}
}
