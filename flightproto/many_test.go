package flightproto

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
)

func TestPartitionList(t *testing.T) {
	tests := []struct {
		name string
		tk   Ticket
		want []int
		bad  bool
	}{
		{"list in its order", Ticket{Partitions: []int{3, 0, 2}}, []int{3, 0, 2}, false},
		{"range", Ticket{Range: []int{1, 4}}, []int{1, 2, 3}, false},
		{"empty range", Ticket{Range: []int{2, 2}}, []int{}, false},
		{"out of range", Ticket{Partitions: []int{0, 5}}, nil, true},
		{"negative", Ticket{Partitions: []int{-1}}, nil, true},
		{"repeated", Ticket{Partitions: []int{1, 1}}, nil, true},
		{"range past the end", Ticket{Range: []int{0, 6}}, nil, true},
		{"range backwards", Ticket{Range: []int{3, 1}}, nil, true},
		{"range of three", Ticket{Range: []int{0, 1, 2}}, nil, true},
		{"both forms", Ticket{Partitions: []int{0}, Range: []int{0, 1}}, nil, true},
		{"too many", Ticket{Range: []int{0, MaxTicketPartitions + 1}}, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.tk.PartitionList(5)
			if tc.bad != errors.Is(err, ErrBadTicket) || (!tc.bad && !slices.Equal(got, tc.want)) {
				t.Errorf("got %v, %v; want %v (bad %v)", got, err, tc.want, tc.bad)
			}
		})
	}
}

// FuzzDecodeTicket decodes arbitrary bytes as a ticket and its partition
// end metadata: no panic, and every list a ticket yields is in range and
// has no repeats.
func FuzzDecodeTicket(f *testing.F) {
	for _, s := range []string{`{"shuffle":"s","partitions":[2,0,1]}`, `{"shuffle":"s","range":[0,3]}`,
		`{"partition":4,"end":true}`, `{"range":[0,100000000]}`, `{}`, `{"ends":[[3,0],[1,7]]}`, `{"ends":[[3,9],[1,7]]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _, _ = DecodePartitionEnd(b)
		checkEnds(t, b, 100)
		var tk Ticket
		if json.Unmarshal(b, &tk) != nil {
			return
		}
		list, err := tk.PartitionList(1000)
		if err != nil {
			return
		}
		seen := map[int]bool{}
		for _, p := range list {
			if p < 0 || p >= 1000 || seen[p] {
				t.Fatalf("ticket %s gives partition %d", b, p)
			}
			seen[p] = true
		}
	})
}

// FuzzDecodePutTag decodes arbitrary bytes as a put's task tag: no panic,
// and a tag it takes encodes back to one that decodes the same.
func FuzzDecodePutTag(f *testing.F) {
	for _, s := range []string{`{"task":3,"attempt":1,"rows":100}`, `{"task":0}`, `{}`, `{"task":-1}`,
		`{"task":1,"extra":2}`, `{"task":1}{"task":2}`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tag, err := DecodePutTag(b)
		if err != nil {
			if !errors.Is(err, ErrBadPutTag) {
				t.Fatalf("%q: %v does not wrap ErrBadPutTag", b, err)
			}
			return
		}
		again, err := DecodePutTag(EncodePutTag(tag))
		if err != nil || again != tag {
			t.Fatalf("%q: %+v encodes to %+v, %v", b, tag, again, err)
		}
	})
}

func TestDecodePutTag(t *testing.T) {
	for s, ok := range map[string]bool{`{"task":3,"attempt":1,"rows":100}`: true, `{"task":0}`: true, `{}`: false,
		`{"task":-1}`: false, `{"task":1,"extra":2}`: false, `{"task":1}{"task":2}`: false, `null`: false, ``: false} {
		if _, err := DecodePutTag([]byte(s)); (err == nil) != ok {
			t.Errorf("%s: %v, want ok %v", s, err, ok)
		}
	}
}

// checkEnds decodes md as the metadata of a batch of rows rows: an error
// wraps ErrBadTicket; ends are in order, within the batch, and encode back
// to metadata that decodes the same.
func checkEnds(t *testing.T, md []byte, rows int64) {
	t.Helper()
	ends, err := DecodeEnds(nil, md, rows)
	if err != nil {
		if !errors.Is(err, ErrBadTicket) {
			t.Fatalf("%q: %v does not wrap ErrBadTicket", md, err)
		}
		return
	}
	var last int64
	for _, e := range ends {
		if e.Row < last || e.Row > rows || e.Partition < 0 {
			t.Fatalf("%q: end %+v after row %d of %d", md, e, last, rows)
		}
		last = e.Row
	}
	if len(ends) == 0 {
		return
	}
	again, err := DecodeEnds(nil, AppendEnds(nil, ends), rows)
	if err != nil || !slices.Equal(again, ends) {
		t.Fatalf("%q: ends %v encode to ones that decode as %v, %v", md, ends, again, err)
	}
}

// TestDecodeEnds: the metadata of a batch of a multi-partition DoGet,
// packed or not, gives the partitions that end in it and where.
func TestDecodeEnds(t *testing.T) {
	tests := []struct {
		name string
		md   string
		rows int64
		want []End
		bad  bool
	}{
		{"data batch", "", 5, nil, false},
		{"end batch", `{"partition":4,"end":true}`, 0, []End{{4, 0}}, false},
		{"packed", `{"ends":[[3,0],[1,7],[2,7],[9,10]]}`, 12, []End{{3, 0}, {1, 7}, {2, 7}, {9, 10}}, false},
		{"packed, ending at the last row", `{"ends":[[0,12]]}`, 12, []End{{0, 12}}, false},
		{"no ends", `{"ends":[]}`, 12, nil, false},
		{"out of order", `{"ends":[[3,9],[1,7]]}`, 12, nil, true},
		{"past the rows", `{"ends":[[3,13]]}`, 12, nil, true},
		{"negative partition", `{"ends":[[-1,1]]}`, 12, nil, true},
		{"not JSON", `{"ends":`, 12, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeEnds(nil, []byte(tc.md), tc.rows)
			if tc.bad != errors.Is(err, ErrBadTicket) || (!tc.bad && !slices.Equal(got, tc.want)) {
				t.Errorf("got %v, %v; want %v (bad %v)", got, err, tc.want, tc.bad)
			}
			checkEnds(t, []byte(tc.md), tc.rows)
		})
	}
}
