package shard

import (
	"fmt"
	"hash/crc32"

	"github.com/shufflenode/shufflenode/barrier"
	"github.com/shufflenode/shufflenode/wire"
)

// Limits on decoded messages; a decoder never allocates past them.
const (
	MaxEntries     = 1 << 20
	MaxRunsPerItem = 1 << 22
	MaxEnds        = 1 << 20
	MaxSumsPerEnd  = 1 << 22
)

// DataAlign is the alignment of each entry's data from the start of the
// message: a receiver that holds the message in a buffer of its own can
// decode Arrow IPC in place, without copying it to aligned memory.
const DataAlign = 8

// Run says that Count units of an Entry's data belong to one output
// partition: rows for dataframes, bytes for array pieces. Runs of an Entry
// are in the order the data holds them.
type Run struct {
	Partition uint32
	Count     uint64
}

// Entry is the part of one input task attempt bound for one destination
// node: an encoded payload holding one or more output partitions. Seq
// numbers the entries of one (task, attempt, destination) from 0; receivers
// use (task, attempt, seq) to drop a resent entry.
type Entry struct {
	Task    uint64
	Attempt uint32
	Seq     uint32
	Runs    []Run
	Data    []byte
	// Parts, on the sending side, is the data in pieces (an Arrow IPC
	// message as its metadata and the record's own buffers), sent without
	// being joined; Data is then nil. Decoded entries have Data only.
	Parts [][]byte
	// Sum, on the sending side when Summed, is Checksum of the data, which
	// the frame's CRC is then combined from (wire.Payload). It is not sent.
	Sum    uint32
	Summed bool
}

// Len is the entry's data size in bytes.
func (e *Entry) Len() int {
	if e.Parts == nil {
		return len(e.Data)
	}
	n := 0
	for _, p := range e.Parts {
		n += len(p)
	}
	return n
}

// Chunks returns the entry's data as parts.
func (e *Entry) Chunks() [][]byte {
	if e.Parts == nil {
		return [][]byte{e.Data}
	}
	return e.Parts
}

// Rows is the sum of the entry's run counts.
func (e *Entry) Rows() uint64 {
	var n uint64
	for _, r := range e.Runs {
		n += r.Count
	}
	return n
}

// End is the end-of-task marker of one (task, attempt) for one receiver:
// how many entries were sent to it and their totals. The receiver commits
// the attempt once it holds the marker and all Pieces entries.
type End struct {
	Task    uint64
	Attempt uint32
	Pieces  uint32
	Totals  barrier.Totals
	// Sums are the attempt's row sums (dataframes) for the output partitions
	// the receiver holds in the attempt's epoch, whether or not their rows
	// were sent to it, in ascending partition order; a partition no row
	// went to is left out. A receiver compares them with those of the
	// attempt that committed a partition first (see PartSum).
	Sums []PartSum
}

// PartSum is what one attempt produced for one output partition: its rows
// and the order-independent sum of their hashes (table.RowSums).
type PartSum struct {
	Partition uint32
	Rows      uint64
	Sum       uint64
}

// Msg is one shards message: entries and end markers of one shuffle and
// epoch.
type Msg struct {
	Shuffle string
	Epoch   uint64
	Entries []Entry
	Ends    []End
}

// AppendMsg appends the wire form of m to dst (entry data is aligned from
// the start of the message, not of dst).
func AppendMsg(dst []byte, m *Msg) []byte {
	return wire.Join(append([][]byte{dst}, MsgParts(m)...))
}

// MsgParts returns the wire form of m in parts (see wire.Vec): the entries'
// data is referenced, not copied, so it must not change until the parts
// are written. Joined, they are AppendMsg's bytes.
func MsgParts(m *Msg) [][]byte { return MsgPayload(m).Parts }

// MsgPayload is MsgParts with the CRC of each entry's data that has its
// Sum.
func MsgPayload(m *Msg) wire.Payload {
	e := new(wire.Vec)
	e.Grow(msgFieldBytes(m))
	e.String(m.Shuffle)
	e.Uvarint(m.Epoch)
	e.Uvarint(uint64(len(m.Entries)))
	for i := range m.Entries {
		appendEntry(e, &m.Entries[i])
	}
	e.Uvarint(uint64(len(m.Ends)))
	for _, x := range m.Ends {
		appendEnd(e, x)
	}
	return e.Payload()
}

// msgFieldBytes estimates the bytes of m's fields other than its entries'
// data, so that they are encoded without growing the buffer a few times
// over: an end marker of a task of 10,000 x 10,000 carries 2,500 row sums,
// and their growth was 9% of the bytes the nodes allocated. Typical
// varints are counted (a run or a row sum's partition delta and rows in 3
// bytes); a message with longer ones grows the buffer as before.
func msgFieldBytes(m *Msg) int {
	n := len(m.Shuffle) + 32
	for i := range m.Entries {
		n += 32 + 3*len(m.Entries[i].Runs)
	}
	for _, x := range m.Ends {
		n += 64 + 11*len(x.Sums)
	}
	return n
}

func appendEntry(e *wire.Vec, x *Entry) {
	e.Uvarint(x.Task)
	e.Uvarint(uint64(x.Attempt))
	e.Uvarint(uint64(x.Seq))
	e.Uvarint(uint64(len(x.Runs)))
	for _, r := range x.Runs {
		e.Uvarint(uint64(r.Partition))
		e.Uvarint(r.Count)
	}
	if x.Summed {
		e.AlignedBlobPartsCRC(x.Chunks(), DataAlign, x.Sum)
	} else {
		e.AlignedBlobParts(x.Chunks(), DataAlign)
	}
}

func appendEnd(e *wire.Vec, x End) {
	e.Uvarint(x.Task)
	e.Uvarint(uint64(x.Attempt))
	e.Uvarint(uint64(x.Pieces))
	e.Uvarint(x.Totals.Pieces)
	e.Uvarint(x.Totals.Rows)
	e.Uvarint(x.Totals.Bytes)
	e.Uvarint(x.Totals.Checksum)
	e.Uvarint(uint64(len(x.Sums)))
	prev := uint32(0)
	for _, ps := range x.Sums {
		e.Uvarint(uint64(ps.Partition - prev)) // ascending: a small delta
		e.Uvarint(ps.Rows)
		e.Uint64(ps.Sum)
		prev = ps.Partition
	}
}

// Decode decodes a message. Entry data aliases b.
func Decode(b []byte) (*Msg, error) {
	d := wire.NewDecoder(b, len(b))
	m := &Msg{Shuffle: d.String(), Epoch: d.Uvarint()}
	n := d.Count(MaxEntries)
	if n > 0 && d.Err() == nil {
		m.Entries = make([]Entry, 0, min(n, d.Remaining()/5))
	}
	for i := 0; i < n && d.Err() == nil; i++ {
		m.Entries = append(m.Entries, decodeEntry(d))
	}
	n = d.Count(MaxEnds)
	for i := 0; i < n && d.Err() == nil; i++ {
		x, err := decodeEnd(d)
		if err != nil {
			return nil, fmt.Errorf("shard: message: %w", err)
		}
		m.Ends = append(m.Ends, x)
	}
	if err := d.Done(); err != nil {
		return nil, fmt.Errorf("shard: message: %w", err)
	}
	return m, nil
}

func decodeEntry(d *wire.Decoder) Entry {
	x := Entry{Task: d.Uvarint(), Attempt: u32(d), Seq: u32(d)}
	n := d.Count(MaxRunsPerItem)
	if n > 0 && d.Err() == nil {
		x.Runs = make([]Run, 0, min(n, d.Remaining()/2))
	}
	for i := 0; i < n && d.Err() == nil; i++ {
		x.Runs = append(x.Runs, Run{Partition: u32(d), Count: d.Uvarint()})
	}
	x.Data = d.AlignedBlob(DataAlign)
	return x
}

func decodeEnd(d *wire.Decoder) (x End, err error) {
	x = End{Task: d.Uvarint(), Attempt: u32(d), Pieces: u32(d)}
	x.Totals = barrier.Totals{Pieces: d.Uvarint(), Rows: d.Uvarint(), Bytes: d.Uvarint(), Checksum: d.Uvarint()}
	x.Sums, err = decodeSums(d)
	return x, err
}

// decodeSums reads an end marker's row sums: partitions must ascend
// strictly and fit 32 bits.
func decodeSums(d *wire.Decoder) ([]PartSum, error) {
	n := d.Count(MaxSumsPerEnd)
	if n == 0 || d.Err() != nil {
		return nil, nil
	}
	out := make([]PartSum, 0, min(n, d.Remaining()/10))
	var prev uint64
	for i := 0; i < n && d.Err() == nil; i++ {
		delta := d.Uvarint()
		p := prev + delta
		if (i > 0 && delta == 0) || delta > 1<<32-1 || p > 1<<32-1 {
			return nil, fmt.Errorf("%w: row sums: partition %d after %d", wire.ErrMalformed, p, prev)
		}
		out = append(out, PartSum{Partition: uint32(p), Rows: d.Uvarint(), Sum: d.Uint64()})
		prev = p
	}
	return out, nil
}

// u32 reads a uvarint that must fit 32 bits.
func u32(d *wire.Decoder) uint32 {
	v := d.Uvarint()
	if v > 1<<32-1 {
		d.Count(0) // poison: a count over its limit records ErrMalformed
		return 0
	}
	return uint32(v)
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Checksum is the CRC-32C of one entry's data: what a sender sums into the
// totals of its end marker and a receiver into what it holds, for the
// barrier to compare.
func Checksum(data []byte) uint32 { return crc32.Checksum(data, castagnoli) }

// ChecksumParts is Checksum of the concatenation of parts.
func ChecksumParts(parts [][]byte) uint32 {
	var sum uint32
	for _, p := range parts {
		sum = crc32.Update(sum, castagnoli, p)
	}
	return sum
}
