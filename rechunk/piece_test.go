package rechunk

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/shufflenode/shufflenode/splitaxes"
)

func TestPieceRoundTrip(t *testing.T) {
	dt, _ := ParseDType("<i2")
	src, err := NewChunk(dt, []int64{3, 4})
	if err != nil {
		t.Fatal(err)
	}
	for i := range src.Data {
		src.Data[i] = byte(i)
	}
	ranges := []splitaxes.Slice{{Start: 1, Stop: 3}, {Start: 2, Stop: splitaxes.Unknown}}
	b, err := AppendPiece([]byte("prefix"), src, ranges)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodePiece(b[len("prefix"):], dt)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := Cut(src, ranges)
	if !slices.Equal(got.Shape, []int64{2, 2}) || !bytes.Equal(got.Data, want.Data) {
		t.Fatalf("decoded %v %v, want [2 2] %v", got.Shape, got.Data, want.Data)
	}
}

func TestDecodePieceRefusesBadBytes(t *testing.T) {
	dt, _ := ParseDType("<f8")
	for name, b := range map[string][]byte{
		"empty":      nil,
		"many dims":  {200},
		"short data": {1, 2, 0, 0, 0},
		"overflow":   {2, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},
	} {
		if _, err := DecodePiece(b, dt); !errors.Is(err, ErrBadPiece) {
			t.Errorf("%s: err %v, want ErrBadPiece", name, err)
		}
	}
}

func FuzzDecodePiece(f *testing.F) {
	dt, _ := ParseDType("<i4")
	src, _ := NewChunk(dt, []int64{2, 3})
	seed, _ := AppendPiece(nil, src, []splitaxes.Slice{{Start: 0, Stop: 2}, {Start: 1, Stop: 3}})
	f.Add(seed)
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := DecodePiece(b, dt)
		if err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("decoded piece does not validate: %v", err)
		}
	})
}
