package flightproto

import (
	"encoding/json"
	"errors"
	"fmt"
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
