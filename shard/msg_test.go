package shard

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/shufflenode/shufflenode/barrier"
	"github.com/shufflenode/shufflenode/wire"
)

func sampleMsg() *Msg {
	return &Msg{Shuffle: "s-1", Epoch: 3,
		Entries: []Entry{
			{Task: 7, Attempt: 1, Seq: 0, Runs: []Run{{Partition: 2, Count: 10}, {Partition: 9, Count: 1}}, Data: []byte("arrow bytes")},
			{Task: 1 << 40, Attempt: 0, Seq: 5, Data: []byte{}},
		},
		Ends: []End{
			{Task: 7, Attempt: 1, Pieces: 1, Totals: barrier.Totals{Pieces: 1, Rows: 11, Bytes: 11, Checksum: 1 << 33},
				Sums: []PartSum{{Partition: 2, Rows: 10, Sum: 1<<64 - 1}, {Partition: 9, Rows: 1, Sum: 5}, {Partition: 1<<32 - 1, Rows: 0, Sum: 0}}},
			{Task: 8},
		},
	}
}

func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    *Msg
	}{
		{"empty", &Msg{Shuffle: "x"}},
		{"entries and ends", sampleMsg()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Decode(AppendMsg(nil, tc.m))
			if err != nil {
				t.Fatal(err)
			}
			if m.Shuffle != tc.m.Shuffle || m.Epoch != tc.m.Epoch || len(m.Entries) != len(tc.m.Entries) || len(m.Ends) != len(tc.m.Ends) {
				t.Fatalf("decoded %+v from %+v", m, tc.m)
			}
			for i, e := range tc.m.Entries {
				got := m.Entries[i]
				if got.Task != e.Task || got.Attempt != e.Attempt || got.Seq != e.Seq || !bytes.Equal(got.Data, e.Data) || len(got.Runs) != len(e.Runs) {
					t.Fatalf("entry %d: %+v, want %+v", i, got, e)
				}
			}
			for i, e := range tc.m.Ends {
				if !reflect.DeepEqual(m.Ends[i], e) {
					t.Fatalf("end %d: %+v, want %+v", i, m.Ends[i], e)
				}
			}
		})
	}
}

func TestDecodeRejectsTruncation(t *testing.T) {
	b := AppendMsg(nil, sampleMsg())
	for n := range len(b) {
		if _, err := Decode(b[:n]); err == nil {
			t.Fatalf("a message cut to %d of %d bytes decoded", n, len(b))
		}
	}
	if _, err := Decode(append(b, 0)); err == nil {
		t.Fatal("trailing byte accepted")
	}
}

// TestDecodeRejectsBadSums: row sums whose partitions do not ascend, or
// pass 32 bits, are refused.
func TestDecodeRejectsBadSums(t *testing.T) {
	for _, sums := range [][]PartSum{
		{{Partition: 3}, {Partition: 3}},
		{{Partition: 3}, {Partition: 2}},
	} {
		b := AppendMsg(nil, &Msg{Shuffle: "x", Ends: []End{{Task: 1, Sums: sums}}})
		if _, err := Decode(b); !errors.Is(err, wire.ErrMalformed) {
			t.Errorf("sums %v: %v, want ErrMalformed", sums, err)
		}
	}
	e := new(wire.Encoder)
	e.String("x")
	// epoch, no entries, one end (task 1, attempt, pieces, 4 totals), one
	// sum of partition 2^32.
	for _, v := range []uint64{0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1 << 32, 1} {
		e.Uvarint(v)
	}
	e.Uint64(7)
	if _, err := Decode(e.Bytes()); err == nil || !strings.Contains(err.Error(), "row sums") {
		t.Errorf("a row sum's partition past 32 bits: %v", err)
	}
}

func TestEntryRows(t *testing.T) {
	e := sampleMsg().Entries[0]
	if got := e.Rows(); got != 11 {
		t.Fatalf("Rows() = %d, want 11", got)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(AppendMsg(nil, sampleMsg()))
	f.Add(AppendMsg(nil, &Msg{Shuffle: "x"}))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b)
		if err != nil {
			return
		}
		// What decodes must survive a re-encoding (varints may have had
		// non-canonical forms, so compare messages, not bytes).
		m2, err := Decode(AppendMsg(nil, m))
		if err != nil || !reflect.DeepEqual(normal(m), normal(m2)) {
			t.Fatalf("message does not survive a round trip (%v):\n%+v\n%+v", err, m, m2)
		}
	})
}

// normal makes empty slices nil so DeepEqual compares content.
func normal(m *Msg) *Msg {
	c := *m
	c.Entries = append([]Entry(nil), m.Entries...)
	for i := range c.Entries {
		if len(c.Entries[i].Runs) == 0 {
			c.Entries[i].Runs = nil
		}
		if len(c.Entries[i].Data) == 0 {
			c.Entries[i].Data = nil
		}
	}
	c.Ends = append([]End(nil), m.Ends...)
	for i := range c.Ends {
		if len(c.Ends[i].Sums) == 0 {
			c.Ends[i].Sums = nil
		}
	}
	return &c
}

// TestDataIsAligned: every entry's data starts at a multiple of DataAlign
// from the message's start, and padding that is not zero is refused.
func TestDataIsAligned(t *testing.T) {
	m := sampleMsg()
	m.Entries = append(m.Entries, Entry{Task: 3, Data: []byte("x")}, Entry{Task: 300, Runs: []Run{{Partition: 1 << 20, Count: 1}}, Data: []byte("yz")})
	b := AppendMsg(nil, m)
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range got.Entries {
		if len(e.Data) == 0 {
			continue
		}
		off := int(uintptr(unsafe.Pointer(unsafe.SliceData(e.Data))) - uintptr(unsafe.Pointer(unsafe.SliceData(b))))
		if off%DataAlign != 0 || !bytes.Equal(e.Data, m.Entries[i].Data) {
			t.Fatalf("entry %d: data at offset %d (%q)", i, off, e.Data)
		}
		// A zero byte just before the data is padding (a length's last
		// byte is not zero): corrupting it must fail the decode.
		if pad := off - 1; b[pad] == 0 {
			bad := bytes.Clone(b)
			bad[pad] = 0xff
			if _, err := Decode(bad); err == nil {
				t.Fatalf("entry %d: non-zero padding at %d accepted", i, pad)
			}
		}
	}
}

// TestMsgPartsEntryParts: an entry sent as parts decodes to the joined
// bytes, aligned like any entry's data, and its checksum is the joined
// bytes' checksum.
func TestMsgPartsEntryParts(t *testing.T) {
	parts := [][]byte{[]byte("meta!"), []byte("0123456789abcdef"), {}, []byte("xyz")}
	m := &Msg{Shuffle: "s", Entries: []Entry{{Task: 1, Runs: []Run{{Partition: 4, Count: 2}}, Parts: parts}, {Task: 2, Data: []byte("d")}}}
	b := wire.Join(MsgParts(m))
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	want := wire.Join(parts)
	if !bytes.Equal(got.Entries[0].Data, want) || m.Entries[0].Len() != len(want) {
		t.Fatalf("entry data %q, want %q", got.Entries[0].Data, want)
	}
	if off := int(uintptr(unsafe.Pointer(unsafe.SliceData(got.Entries[0].Data))) - uintptr(unsafe.Pointer(unsafe.SliceData(b)))); off%DataAlign != 0 {
		t.Fatalf("data at offset %d", off)
	}
	if ChecksumParts(parts) != Checksum(want) {
		t.Fatal("ChecksumParts differs from the joined bytes' Checksum")
	}
}

// TestMsgPayloadKnownCRCs: MsgPayload's parts are MsgParts', and each
// summed entry's data is a run of them that it knows the CRC of (the
// entry's Sum, its length), while an entry without a Sum is not known. A
// frame written from it is the frame of the joined message.
func TestMsgPayloadKnownCRCs(t *testing.T) {
	a := [][]byte{[]byte("meta!"), []byte("0123456789abcdef"), {}, []byte("xyz")}
	b := [][]byte{bytes.Repeat([]byte("b"), 100<<10)}
	m := &Msg{Shuffle: "s", Entries: []Entry{
		{Task: 1, Runs: []Run{{Partition: 4, Count: 2}}, Parts: a, Sum: ChecksumParts(a), Summed: true},
		{Task: 2, Data: []byte("not summed")},
		{Task: 3, Parts: b, Sum: ChecksumParts(b), Summed: true},
	}}
	p := MsgPayload(m)
	if !bytes.Equal(wire.Join(p.Parts), wire.Join(MsgParts(m))) {
		t.Fatal("MsgPayload's parts differ from MsgParts'")
	}
	if len(p.Known) != 2 {
		t.Fatalf("%d known runs, want 2 (the summed entries)", len(p.Known))
	}
	for i, e := range []Entry{m.Entries[0], m.Entries[2]} {
		k := p.Known[i]
		run := wire.Join(p.Parts[k.First : k.First+k.Count])
		if k.Sum != e.Sum || k.Len != e.Len() || Checksum(run) != e.Sum {
			t.Fatalf("known run %d: sum %08x len %d, its bytes' sum %08x; the entry's %08x, %d bytes", i, k.Sum, k.Len, Checksum(run), e.Sum, e.Len())
		}
	}
	var got, want bytes.Buffer
	if err := wire.WriteFramePayload(&got, wire.TypeShards, p); err != nil {
		t.Fatal(err)
	}
	if err := wire.WriteFrame(&want, wire.TypeShards, AppendMsg(nil, m)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatal("the frame written from MsgPayload differs from the joined message's")
	}
}
