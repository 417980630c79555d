package control

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/shufflenode/shufflenode/barrier"
	"github.com/shufflenode/shufflenode/spec"
)

// reports are messages of every op Encode writes in binary, and some it
// does not.
func reports() []Msg {
	held := barrier.Totals{Pieces: 2, Rows: 3, Bytes: 300, Checksum: 1 << 63}
	sent := map[string]barrier.Totals{"a": held, "node-2": {Rows: 1}}
	return []Msg{
		{Op: OpBegin, Shuffle: "s", Node: "n", Epoch: 2, Task: 3, Attempt: 1},
		{Op: OpDone, Shuffle: "s", Node: "n", Task: 1 << 40, Attempt: 1<<32 - 1, Sent: sent},
		{Op: OpCommitted, Shuffle: "s", Node: "n", Held: &held, Differs: "rows differ"},
		{Op: OpCommitted, Shuffle: "s", Node: "n", Commits: []Committed{{Task: 1, Held: held}, {Task: 2, Attempt: 3, Epoch: 4, Held: held, Differs: "é"}}},
		{Op: OpTasks, Shuffle: "s", Node: "n", Tasks: []TaskReport{{Op: OpBegin, Task: 1}, {Op: OpDone, Task: 2, Epoch: 1, Sent: sent}}},
		{Op: OpSeal, Shuffle: "s", Node: "n", Term: 2},
		{Op: OpBegin, Shuffle: "s", Node: "n", Reason: "not in the binary form"},
		{Op: OpCreate, Shuffle: "s", Spec: &spec.Spec{ID: "s"}, Members: []string{"a"}},
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	for _, m := range reports() {
		t.Run(m.Op, func(t *testing.T) {
			b, err := Encode(&m)
			if err != nil {
				t.Fatal(err)
			}
			if want := compact(&m); (b[0] == binaryMagic) != want {
				t.Errorf("binary form %v, want %v", b[0] == binaryMagic, want)
			}
			got, err := Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, &m) {
				t.Errorf("round trip:\n got %+v\nwant %+v", got, m)
			}
		})
	}
}

func TestEncodeSmaller(t *testing.T) {
	cs := make([]Committed, 1000)
	for i := range cs {
		cs[i] = Committed{Task: uint64(i), Epoch: 1, Held: barrier.Totals{Pieces: 4, Rows: 1000, Bytes: 32000, Checksum: 0xdeadbeefcafe}}
	}
	m := Msg{Op: OpCommitted, Shuffle: "s", Node: "node-1", Commits: cs}
	bin, _ := Encode(&m)
	js, _ := json.Marshal(m)
	if len(bin)*2 > len(js) {
		t.Errorf("1,000 commits: %d bytes in binary, %d in JSON; want at most half", len(bin), len(js))
	}
}

func TestDecodeBinaryRefuses(t *testing.T) {
	good, _ := Encode(&Msg{Op: OpTasks, Shuffle: "s", Node: "n", Tasks: []TaskReport{{Op: OpBegin, Task: 1}}})
	seal := append([]byte{binaryMagic}, putStrings(nil, OpSeal, "s", "n", "")...)
	seal = append(seal, 0, 0, 0, 0, 0, 0, 0)
	for name, b := range map[string][]byte{
		"truncated":       good[:len(good)-1],
		"trailing bytes":  append(append([]byte{}, good...), 0),
		"huge count":      append(append([]byte{}, good[:len(good)-6]...), 0xff, 0xff, 0xff, 0xff, 0x0f),
		"an op not in it": seal,
		"bad shuffle ID":  append([]byte{binaryMagic}, putStrings(nil, OpBegin, "a/b", "n", "")...),
	} {
		if m, err := Decode(b); err == nil {
			t.Errorf("%s: decoded %+v", name, m)
		}
	}
}

// FuzzDecodeBinary: whatever Decode takes in the binary form, Encode
// writes back as the same message.
func FuzzDecodeBinary(f *testing.F) {
	for _, m := range reports() {
		b, _ := Encode(&m)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Decode(b)
		if err != nil {
			return
		}
		again, err := Encode(c)
		if err != nil {
			t.Fatal(err)
		}
		c2, err := Decode(again)
		if err != nil || !reflect.DeepEqual(c, c2) {
			t.Fatalf("does not survive a round trip: %v\n%+v\n%+v", err, c, c2)
		}
	})
}

// commitBatch is a receiver's report of n commits, as sendCommits sends it.
func commitBatch(n int) *Msg {
	cs := make([]Committed, n)
	for i := range cs {
		cs[i] = Committed{Task: uint64(i), Epoch: 1, Held: barrier.Totals{Pieces: 4, Rows: 130, Bytes: 4160, Checksum: 0xdeadbeefcafe}}
	}
	return &Msg{Op: OpCommitted, Shuffle: "bench", Node: "node-1", Commits: cs}
}

func BenchmarkDecodeCommits(b *testing.B) {
	m := commitBatch(16)
	bin, _ := Encode(m)
	js, _ := json.Marshal(m)
	for _, form := range []struct {
		name string
		body []byte
	}{{"binary", bin}, {"json", js}} {
		b.Run(form.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(form.body)))
			for b.Loop() {
				if _, err := Decode(form.body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkEncodeCommits(b *testing.B) {
	m := commitBatch(16)
	b.Run("binary", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Encode(m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
