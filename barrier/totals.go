package barrier

import "fmt"

// Totals sums what one task attempt sent to one receiver (as reported by the
// sender) or what one receiver holds of it (as reported by the receiver).
// The zero value is an empty total: a receiver that got only the
// end-of-task marker.
type Totals struct {
	// Pieces is the number of shards (pieces of data) sent.
	Pieces uint64
	// Rows is the number of rows (or elements) sent.
	Rows uint64
	// Bytes is the number of payload bytes sent.
	Bytes uint64
	// Checksum is the sum (mod 2^64) of the CRC-32C of every piece, so it
	// does not depend on the order in which pieces arrive.
	Checksum uint64
}

// Add counts one piece of rows rows and bytes bytes whose CRC-32C is crc.
func (t *Totals) Add(rows, bytes uint64, crc uint32) {
	t.Pieces++
	t.Rows += rows
	t.Bytes += bytes
	t.Checksum += uint64(crc)
}

// Plus returns the field-wise sum of a and b.
func (a Totals) Plus(b Totals) Totals {
	return Totals{
		Pieces:   a.Pieces + b.Pieces,
		Rows:     a.Rows + b.Rows,
		Bytes:    a.Bytes + b.Bytes,
		Checksum: a.Checksum + b.Checksum,
	}
}

// IsZero reports whether t counts nothing.
func (t Totals) IsZero() bool { return t == Totals{} }

// String formats t for error messages and logs.
func (t Totals) String() string {
	return fmt.Sprintf("{pieces=%d rows=%d bytes=%d checksum=%#x}", t.Pieces, t.Rows, t.Bytes, t.Checksum)
}

// Minus returns the field-wise difference a - b (with wrap-around, so
// a.Plus(b).Minus(b) == a).
func (a Totals) Minus(b Totals) Totals {
	return Totals{
		Pieces:   a.Pieces - b.Pieces,
		Rows:     a.Rows - b.Rows,
		Bytes:    a.Bytes - b.Bytes,
		Checksum: a.Checksum - b.Checksum,
	}
}
