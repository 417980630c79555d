package spill

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// encodeGroup builds a group value from pieces given in Key order.
func encodeGroup(pieces []got) []byte {
	var b []byte
	for _, p := range pieces {
		b = appendGroupPiece(b, p.Key, p.Data)
	}
	return b
}

// decodeGroup checks a group and returns its pieces.
func decodeGroup(first Key, value []byte) ([]got, error) {
	c, err := newGroupCursor(first, value)
	if err != nil {
		return nil, err
	}
	var out []got
	for ok := true; ok; ok = c.next() {
		out = append(out, got{Key: c.key, Data: c.data})
	}
	return out, nil
}

func TestGroupRoundTrip(t *testing.T) {
	cases := []struct {
		name   string
		pieces []got
	}{
		{"one piece", []got{{Key{3, 1, 0, 0}, []byte("abc"), false}}},
		{"empty piece", []got{{Key{3, 1, 0, 0}, []byte{}, false}}},
		{"several, seq and attempt order", []got{
			{Key{3, 1, 0, 0}, []byte("a"), false}, {Key{3, 1, 0, 1}, nil, false},
			{Key{3, 1, 1, 0}, []byte("bb"), false}, {Key{3, 2, 0, 0}, bytes.Repeat([]byte{7}, 5000), false},
		}},
		{"extreme keys", []got{
			{Key{math.MaxUint32, 0, 0, 0}, []byte("x"), false},
			{Key{math.MaxUint32, math.MaxUint64, math.MaxUint32, math.MaxUint32}, []byte("y"), false},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, err := decodeGroup(tc.pieces[0].Key, encodeGroup(tc.pieces))
			if err != nil {
				t.Fatal(err)
			}
			if err := sameData(g, tc.pieces); err != nil {
				t.Fatal(err)
			}
			for i, p := range g {
				if p.Data == nil {
					t.Errorf("piece %d: nil data; a stored empty piece must read back non-nil", i)
				}
			}
		})
	}
}

func TestCheckGroupRejects(t *testing.T) {
	k0, k1 := Key{Partition: 2, Task: 5}, Key{Partition: 2, Task: 6}
	good := encodeGroup([]got{{Key: k0, Data: []byte("abcd")}, {Key: k1, Data: []byte("ef")}})
	longer := slices.Clone(good)
	binary.BigEndian.PutUint32(longer[16:20], 1000)
	cases := []struct {
		name  string
		first Key
		value []byte
	}{
		{"empty", k0, nil},
		{"truncated header", k0, good[:groupHeaderLen-1]},
		{"truncated piece", k0, good[:len(good)-1]},
		{"trailing bytes", k0, append(slices.Clone(good), 0)},
		{"length past the end", k0, longer},
		{"first piece is not the group key", k1, good},
		{"keys out of order", k1, encodeGroup([]got{{Key: k1}, {Key: k0}})},
		{"duplicate key", k0, encodeGroup([]got{{Key: k0}, {Key: k0}})},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := decodeGroup(tc.first, tc.value); !errors.Is(err, ErrBadValue) {
				t.Fatalf("decodeGroup = %v, want ErrBadValue", err)
			}
		})
	}
}

// FuzzGroupDecode checks that a group decodes without panicking, that any error wraps
// ErrBadValue, and that what decodes re-encodes to the same bytes.
func FuzzGroupDecode(f *testing.F) {
	f.Add(uint64(5), uint32(0), uint32(0), encodeGroup([]got{{Key: Key{Task: 5}, Data: []byte("abcd")}}))
	f.Add(uint64(1), uint32(0), uint32(2), encodeGroup([]got{
		{Key: Key{Task: 1, Seq: 2}, Data: []byte{}}, {Key: Key{Task: 1, Seq: 3}, Data: []byte("x")},
		{Key: Key{Task: 9, Attempt: 1}, Data: bytes.Repeat([]byte("yz"), 300)},
	}))
	f.Add(uint64(0), uint32(0), uint32(0), []byte{})
	f.Fuzz(func(t *testing.T, task uint64, attempt, seq uint32, value []byte) {
		first := Key{Partition: 4, Task: task, Attempt: attempt, Seq: seq}
		g, err := decodeGroup(first, value)
		if err != nil {
			if !errors.Is(err, ErrBadValue) {
				t.Fatalf("error %v does not wrap ErrBadValue", err)
			}
			return
		}
		if g[0].Key != first {
			t.Fatalf("first piece %v, group key %v", g[0].Key, first)
		}
		if re := encodeGroup(g); !bytes.Equal(re, value) {
			t.Fatalf("decoded %d pieces re-encode to %x, not %x", len(g), re, value)
		}
	})
}

// TestMergeGroups checks the merger against a brute-force reference: the pieces of one
// partition spread over memory, groups of several spills whose key ranges overlap, and stale
// leftover groups repeating keys held elsewhere. Each key must come out once, in order, from
// memory when memory holds it.
func TestMergeGroups(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 11))
	for i := range 200 {
		t.Run(fmt.Sprint(i), func(t *testing.T) { checkMergeGroups(t, rng) })
	}
}

func checkMergeGroups(t *testing.T, rng *rand.Rand) {
	keys := randomKeys(rng, 1+rng.IntN(60))
	inMem := map[Key]bool{}
	var mem []*piece
	var onDisk []Key
	for _, k := range keys {
		if rng.IntN(3) == 0 {
			inMem[k] = true
			mem = append(mem, &piece{key: k, value: &testValue{data: pieceData("s", k, 3)}})
		} else {
			onDisk = append(onDisk, k)
		}
	}
	d := newMemDisk()
	if len(keys) > 1 && rng.IntN(2) == 0 { // leftovers of a failed spill, of keys now elsewhere
		writeSpills(t, d, rng, keys[rng.IntN(len(keys)/2):][:1+rng.IntN(len(keys)/2)])
	}
	writeSpills(t, d, rng, onDisk)
	var out []got
	m := merger{mem: mem, prefixLen: len(shufflePrefix("s")), fn: func(k Key, v Value, disk []byte) error {
		if v != nil {
			disk, _ = v.MarshalSpill()
		}
		out = append(out, got{Key: k, Data: bytes.Clone(disk), OnDisk: v == nil})
		return nil
	}}
	if err := d.Scan(partitionPrefix("s", 1), m.onDisk); err != nil {
		t.Fatal(err)
	}
	if err := m.finish(); err != nil {
		t.Fatal(err)
	}
	want := make([]got, len(keys))
	for i, k := range keys {
		want[i] = got{Key: k, Data: pieceData("s", k, 3), OnDisk: !inMem[k]}
	}
	if err := sameData(out, want); err != nil {
		t.Fatal(err)
	}
	for i := range out {
		if out[i].OnDisk != want[i].OnDisk {
			t.Fatalf("%v: on disk %v, want %v (memory wins)", out[i].Key, out[i].OnDisk, want[i].OnDisk)
		}
	}
}

// randomKeys returns n distinct keys of partition 1 in Key order.
func randomKeys(rng *rand.Rand, n int) []Key {
	set := map[Key]bool{}
	for len(set) < n {
		set[Key{1, uint64(rng.IntN(40)), uint32(rng.IntN(2)), uint32(rng.IntN(3))}] = true
	}
	keys := make([]Key, 0, n)
	for k := range set {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, Key.Compare)
	return keys
}

// writeSpills spreads keys over a few random spills (random subsets, so their ranges overlap)
// and writes each as groups cut at random points.
func writeSpills(t *testing.T, d *memDisk, rng *rand.Rand, keys []Key) {
	shuffled := slices.Clone(keys)
	rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	for len(shuffled) > 0 {
		n := 1 + rng.IntN(len(shuffled))
		spill := slices.Clone(shuffled[:n])
		shuffled = shuffled[n:]
		slices.SortFunc(spill, Key.Compare)
		for len(spill) > 0 {
			g := spill[:1+rng.IntN(len(spill))]
			spill = spill[len(g):]
			pieces := make([]got, len(g))
			for i, k := range g {
				pieces[i] = got{Key: k, Data: pieceData("s", k, 3)}
			}
			if err := d.WriteBatch([]Entry{{Key: encodeKey("s", g[0]), Value: encodeGroup(pieces)}}); err != nil {
				t.Fatal(err)
			}
		}
	}
}
