package flightproto

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// MaxTicketPartitions bounds the partitions of one multi-partition DoGet.
const MaxTicketPartitions = 65536

// ErrBadTicket marks a multi-partition ticket a node refuses.
var ErrBadTicket = errors.New("flightproto: bad ticket")

// PartitionEnd is the app metadata of the empty batch that ends each
// partition of a multi-partition DoGet: the batches streamed since the
// previous end (or the start) are partition Partition's rows.
type PartitionEnd struct {
	Partition int  `json:"partition"`
	End       bool `json:"end"`
}

// Many reports whether t reads several partitions (Partitions or Range).
func (t Ticket) Many() bool { return t.Partitions != nil || t.Range != nil }

// PartitionList returns the partitions of a multi-partition ticket, in
// stream order, checked against a shuffle of partitions partitions: each in
// range, no repeats, at most MaxTicketPartitions.
func (t Ticket) PartitionList(partitions int) ([]int, error) {
	if t.Partitions != nil && t.Range != nil {
		return nil, fmt.Errorf("%w: shuffle %s: partitions and range together", ErrBadTicket, t.Shuffle)
	}
	list := t.Partitions
	if t.Range != nil {
		if len(t.Range) != 2 || t.Range[0] < 0 || t.Range[1] < t.Range[0] || t.Range[1]-t.Range[0] > MaxTicketPartitions {
			return nil, fmt.Errorf("%w: shuffle %s: range %v is not [lo, hi) of at most %d", ErrBadTicket, t.Shuffle, t.Range, MaxTicketPartitions)
		}
		list = make([]int, 0, t.Range[1]-t.Range[0])
		for p := t.Range[0]; p < t.Range[1]; p++ {
			list = append(list, p)
		}
	}
	return list, checkList(t.Shuffle, list, partitions)
}

// checkList checks a multi-partition ticket's partitions.
func checkList(shuffle string, list []int, partitions int) error {
	if len(list) > MaxTicketPartitions {
		return fmt.Errorf("%w: shuffle %s: %d partitions, at most %d", ErrBadTicket, shuffle, len(list), MaxTicketPartitions)
	}
	seen := make(map[int]bool, len(list))
	for _, p := range list {
		if p < 0 || p >= partitions || seen[p] {
			return fmt.Errorf("%w: shuffle %s: partition %d out of range 0..%d or repeated", ErrBadTicket, shuffle, p, partitions-1)
		}
		seen[p] = true
	}
	return nil
}

// DecodePartitionEnd decodes a batch's app metadata; ok is false when it is
// not a partition end (a data batch carries none).
func DecodePartitionEnd(md []byte) (PartitionEnd, bool, error) {
	if len(md) == 0 {
		return PartitionEnd{}, false, nil
	}
	var e PartitionEnd
	if err := json.Unmarshal(md, &e); err != nil {
		return PartitionEnd{}, false, fmt.Errorf("%w: partition end metadata: %w", ErrBadTicket, err)
	}
	return e, e.End, nil
}

// End says that partition Partition's rows end at row Row (exclusive) of
// a batch of a multi-partition DoGet: its rows are those streamed since
// the previous end, up to that row.
type End struct {
	Partition int
	Row       int64
}

// batchEnds is the app metadata of a batch of a multi-partition DoGet:
// that of an end batch ({"partition","end"}) or of a packed batch
// ({"ends":[[partition, row], ...]}).
type batchEnds struct {
	Partition int        `json:"partition"`
	End       bool       `json:"end"`
	Ends      [][2]int64 `json:"ends"`
}

// AppendEnds appends the app metadata of a packed batch in which
// partitions end at rows ends (in stream order) to dst.
func AppendEnds(dst []byte, ends []End) []byte {
	dst = append(dst, `{"ends":[`...)
	for i, e := range ends {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '[')
		dst = strconv.AppendInt(dst, int64(e.Partition), 10)
		dst = append(dst, ',')
		dst = strconv.AppendInt(dst, e.Row, 10)
		dst = append(dst, ']')
	}
	return append(dst, "]}"...)
}

// DecodeEnds decodes the app metadata of a batch of rows rows of a
// multi-partition DoGet, packed or not, into the partitions that end in it
// (appended to dst, in stream order): none for a batch without metadata,
// one at row 0 for an end batch. Ends out of order or past the batch's
// rows are an error wrapping ErrBadTicket.
func DecodeEnds(dst []End, md []byte, rows int64) ([]End, error) {
	if len(md) == 0 {
		return dst, nil
	}
	var b batchEnds
	if err := json.Unmarshal(md, &b); err != nil {
		return dst, fmt.Errorf("%w: partition end metadata: %w", ErrBadTicket, err)
	}
	if b.End {
		return append(dst, End{Partition: b.Partition}), nil
	}
	var last int64
	for _, e := range b.Ends {
		if e[1] < last || e[1] > rows || e[0] < 0 || e[0] > math.MaxInt32 {
			return dst, fmt.Errorf("%w: partition %d ends at row %d of a batch of %d, after row %d", ErrBadTicket, e[0], e[1], rows, last)
		}
		last = e[1]
		dst = append(dst, End{Partition: int(e[0]), Row: e[1]})
	}
	return dst, nil
}
