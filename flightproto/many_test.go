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
		`{"partition":4,"end":true}`, `{"range":[0,100000000]}`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _, _ = DecodePartitionEnd(b)
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
