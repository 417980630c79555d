package api

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/shufflenode/shufflenode/dfops"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/service"
)

// opSeeds are real encoded tickets: what client.Join and client.Sort send.
func opSeeds(t testing.TB) [][]byte {
	js := flightproto.JoinSpecOf(dfops.JoinSpec{LeftOn: []string{"k", "s"}, RightOn: []string{"k", "t"}, How: dfops.Outer, Suffixes: [2]string{"_l", "_r"}})
	var out [][]byte
	for _, op := range []flightproto.OpTicket{
		{Op: flightproto.OpJoin, Shuffles: []string{"merge-1-left", "merge-1-right"}, Partition: 7, Join: &js},
		{Op: flightproto.OpSort, Shuffles: []string{"set-index-1"}, Partition: 0, Column: "key"},
		{Op: flightproto.OpJoin, Shuffles: []string{"merge-1-left", "merge-1-right"}, Partition: 3, Join: &js,
			Write: &flightproto.WriteSpec{Path: "/data/out/part-00003.parquet", Compression: "auto", NoDictionary: true}},
		{Op: flightproto.OpSort, Shuffles: []string{"set-index-1"}, Partition: 9, Column: "key", Write: &flightproto.WriteSpec{Path: "/o/part-9.parquet"}},
		{Op: flightproto.OpCopy, Shuffles: []string{"shuffle-1"}, Partition: 2, Write: &flightproto.WriteSpec{Path: "/o/part-00002.parquet", Compression: "zstd"}},
	} {
		b, err := json.Marshal(op)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

func TestDecodeOpTicket(t *testing.T) {
	for _, b := range opSeeds(t) {
		op, err := DecodeOpTicket(b)
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if back, _ := json.Marshal(op); string(back) != string(b) {
			t.Errorf("round trip: %s -> %s", b, back)
		}
	}
	for _, tc := range []struct{ name, ticket, mention string }{
		{"empty", ``, "EOF"},
		{"not an object", `[1]`, "cannot unmarshal"},
		{"trailing data", `{"op":"sort","shuffles":["a"],"column":"k"} {}`, "after the JSON object"},
		{"unknown op", `{"op":"scan","shuffles":["a"]}`, `"scan"`},
		{"unknown field", `{"op":"sort","shuffles":["a"],"column":"k","x":1}`, `"x"`},
		{"sort of two", `{"op":"sort","shuffles":["a","b"],"column":"k"}`, "takes 1 shuffles, got 2"},
		{"sort without column", `{"op":"sort","shuffles":["a"]}`, `"column"`},
		{"sort with a join", `{"op":"sort","shuffles":["a"],"column":"k","join":{"left_on":["k"],"right_on":["k"]}}`, `no "join"`},
		{"join with a column", `{"op":"join","shuffles":["a","b"],"column":"k","join":{"left_on":["k"],"right_on":["k"]}}`, `no "column"`},
		{"join without keys", `{"op":"join","shuffles":["a","b"],"join":{}}`, "no key columns"},
		{"join keys of different counts", `{"op":"join","shuffles":["a","b"],"join":{"left_on":["k","j"],"right_on":["k"]}}`, "2 left keys"},
		{"one suffix", `{"op":"join","shuffles":["a","b"],"join":{"left_on":["k"],"right_on":["k"],"suffixes":["_a"]}}`, "1 suffixes"},
		{"negative partition", `{"op":"sort","shuffles":["a"],"partition":-3,"column":"k"}`, "-3"},
		{"fractional partition", `{"op":"sort","shuffles":["a"],"partition":1.5,"column":"k"}`, "partition"},
		{"bad ID", `{"op":"sort","shuffles":[""],"column":"k"}`, "shuffle ID"},
		{"write to a relative path", `{"op":"sort","shuffles":["a"],"column":"k","write":{"path":"out/p.parquet"}}`, "not absolute"},
		{"write to an unclean path", `{"op":"sort","shuffles":["a"],"column":"k","write":{"path":"/o/../etc/p.parquet"}}`, "not clean"},
		{"write to a non-Parquet name", `{"op":"sort","shuffles":["a"],"column":"k","write":{"path":"/o/.bashrc"}}`, ".parquet"},
		{"write to a hidden name", `{"op":"sort","shuffles":["a"],"column":"k","write":{"path":"/o/.x.parquet"}}`, "not starting with a dot"},
		{"write without a path", `{"op":"sort","shuffles":["a"],"column":"k","write":{}}`, "not absolute"},
		{"write with an unknown codec", `{"op":"sort","shuffles":["a"],"column":"k","write":{"path":"/o/p.parquet","compression":"lzo"}}`, "lzo"},
		{"write with an unknown field", `{"op":"sort","shuffles":["a"],"column":"k","write":{"path":"/o/p.parquet","mode":1}}`, `"mode"`},
		{"copy without write", `{"op":"copy","shuffles":["a"]}`, `needs "write"`},
		{"copy with a column", `{"op":"copy","shuffles":["a"],"column":"k","write":{"path":"/o/p.parquet"}}`, `no "column"`},
		{"copy of two", `{"op":"copy","shuffles":["a","b"],"write":{"path":"/o/p.parquet"}}`, "takes 1 shuffles, got 2"},
		{"too long", `{"op":"sort","shuffles":["a"],"column":"` + strings.Repeat("k", MaxOpTicketBytes) + `"}`, "over the limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeOpTicket([]byte(tc.ticket))
			if !errors.Is(err, service.ErrBadInput) || !strings.Contains(err.Error(), tc.mention) {
				t.Fatalf("DecodeOpTicket: %v, want ErrBadInput mentioning %q", err, tc.mention)
			}
		})
	}
}

// TestIsOpTicket: tickets with an "op" field go to the node-side ops, all
// others (partition tickets, garbage) to the partition read.
func TestIsOpTicket(t *testing.T) {
	for _, tc := range []struct {
		ticket string
		want   bool
	}{
		{`{"shuffle":"a","partition":1}`, false},
		{`{"op":"sort","shuffles":["a"],"column":"k"}`, true},
		{`{"op":""}`, true},
		{`{"op":null}`, false},
		{`not json`, false},
	} {
		if got := isOpTicket([]byte(tc.ticket)); got != tc.want {
			t.Errorf("isOpTicket(%s) = %v, want %v", tc.ticket, got, tc.want)
		}
	}
}

func TestJoinSpecRoundTrip(t *testing.T) {
	for _, j := range []dfops.JoinSpec{
		dfops.DefaultJoinSpec("k"),
		{LeftOn: []string{"a"}, RightOn: []string{"b"}, How: dfops.Right},
		{LeftOn: []string{"a", "c"}, RightOn: []string{"b", "c"}, How: dfops.Left, Suffixes: [2]string{"", "_r"}},
	} {
		back, err := flightproto.JoinSpecOf(j).DFOps()
		if err != nil || !reflect.DeepEqual(back, j) {
			t.Errorf("%+v -> %+v, %v", j, back, err)
		}
	}
}

// FuzzOpTicket: the decoder of op tickets (bytes from the network) never
// panics, refuses with ErrBadInput, and what it accepts is valid and
// survives a round trip.
func FuzzOpTicket(f *testing.F) {
	for _, b := range opSeeds(f) {
		f.Add(b)
	}
	f.Add([]byte(`{"op":"join","shuffles":["a","b"],"partition":1,"join":{"left_on":["k"],"right_on":["k"],"how":"left","suffixes":["1","2"]}}`))
	f.Add([]byte(`{"shuffle":"a","partition":2}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		op, err := DecodeOpTicket(b)
		if err != nil {
			if !errors.Is(err, service.ErrBadInput) {
				t.Fatalf("error without ErrBadInput: %v", err)
			}
			return
		}
		if err := op.Validate(); err != nil {
			t.Fatalf("accepted an invalid ticket %+v: %v", op, err)
		}
		enc, err := json.Marshal(op)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeOpTicket(enc)
		if err != nil || !reflect.DeepEqual(back, op) {
			t.Fatalf("round trip of %s: %+v, %v; want %+v", enc, back, err, op)
		}
	})
}
