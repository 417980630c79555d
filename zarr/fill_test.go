package zarr

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"

	"github.com/shufflenode/shufflenode/rechunk"
)

func TestFillBytes(t *testing.T) {
	cases := []struct {
		dtype, fill string
		want        []byte
	}{
		{"<i4", "", []byte{0, 0, 0, 0}},
		{"<i4", "null", []byte{0, 0, 0, 0}},
		{"<i4", "7", []byte{7, 0, 0, 0}},
		{">i4", "7", []byte{0, 0, 0, 7}},
		{"<i2", "-2", []byte{0xfe, 0xff}},
		{">i2", "-2", []byte{0xff, 0xfe}},
		{"|i1", "-128", []byte{0x80}},
		{"|u1", "255", []byte{0xff}},
		{"<u8", "18446744073709551615", bytes.Repeat([]byte{0xff}, 8)},
		{"<i8", "-9223372036854775808", []byte{0, 0, 0, 0, 0, 0, 0, 0x80}},
		{"<u2", "7.0", []byte{7, 0}},
		{"<u2", "1e3", []byte{0xe8, 0x03}},
		{"|b1", "true", []byte{1}},
		{"|b1", "false", []byte{0}},
		{"|b1", "1", []byte{1}},
		{"<f8", "0.5", []byte{0, 0, 0, 0, 0, 0, 0xe0, 0x3f}},
		{">f8", "0.5", []byte{0x3f, 0xe0, 0, 0, 0, 0, 0, 0}},
		{"<f8", `"NaN"`, []byte{0, 0, 0, 0, 0, 0, 0xf8, 0x7f}}, // NumPy's NaN
		{">f8", `"NaN"`, []byte{0x7f, 0xf8, 0, 0, 0, 0, 0, 0}},
		{"<c16", `["NaN", -1]`, []byte{0, 0, 0, 0, 0, 0, 0xf8, 0x7f, 0, 0, 0, 0, 0, 0, 0xf0, 0xbf}},
		{"<f4", `"NaN"`, []byte{0, 0, 0xc0, 0x7f}},
		{"<f4", `"Infinity"`, []byte{0, 0, 0x80, 0x7f}},
		{">f4", `"-Infinity"`, []byte{0xff, 0x80, 0, 0}},
		{"<f4", "1.5", []byte{0, 0, 0xc0, 0x3f}},
		{"<c8", "[1.5, 0]", []byte{0, 0, 0xc0, 0x3f, 0, 0, 0, 0}},
		{">c8", `[0, "Infinity"]`, []byte{0, 0, 0, 0, 0x7f, 0x80, 0, 0}},
		{"<c16", "1.5", []byte{0, 0, 0, 0, 0, 0, 0xf8, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0}},
	}
	for _, c := range cases {
		t.Run(c.dtype+"="+c.fill, func(t *testing.T) {
			got, err := FillBytes(mustDType(t, c.dtype), raw(c.fill))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, c.want) {
				t.Fatalf("got % x, want % x", got, c.want)
			}
		})
	}
}

func TestFillBytesRefused(t *testing.T) {
	cases := []struct{ dtype, fill string }{
		{"|u1", "256"}, {"|u1", "-1"}, {"|i1", "128"}, {"<i4", "1.5"}, {"<i4", `"NaN"`},
		{"<i8", "1e30"}, {"<u4", "true"}, {"|b1", "2"}, {"|b1", `"true"`}, {"<f4", "1e39"},
		{"<f8", "1e400"}, {"<f8", `"nan"`}, {"<f8", "true"}, {"<f8", "[1]"}, {"<c8", "[1]"},
		{"<c8", "[1, 2, 3]"}, {"<c16", `["x", 0]`}, {"<f8", "{"}, {"<i4", "0x10"}, {"<f8", `"1.5"`},
	}
	for _, c := range cases {
		t.Run(c.dtype+"="+c.fill, func(t *testing.T) {
			_, err := FillBytes(mustDType(t, c.dtype), json.RawMessage(c.fill))
			if !errors.Is(err, ErrFillValue) {
				t.Fatalf("err = %v, want ErrFillValue", err)
			}
		})
	}
	if _, err := FillBytes(rechunk.DType{}, nil); !errors.Is(err, ErrDType) {
		t.Fatalf("zero dtype: err = %v, want ErrDType", err)
	}
}

// TestMissingChunksReadAsFill writes some chunks of each array and checks
// that the others read as the fill value, element by element.
func TestMissingChunksReadAsFill(t *testing.T) {
	cases := []struct{ dtype, fill string }{
		{"<i4", "7"}, {">i2", "-2"}, {"<f8", `"NaN"`}, {">f8", `"NaN"`}, {"<f4", `"-Infinity"`},
		{"|b1", "true"}, {"<c16", `[1.5, "NaN"]`}, {"|u1", "null"}, {">f8", "0.5"},
	}
	for i, c := range cases {
		t.Run(c.dtype+"="+c.fill, func(t *testing.T) {
			comp := comps[i%3]
			a, err := Create(filepath.Join(t.TempDir(), "a"), Meta{Shape: []int64{5, 4}, Chunks: []int64{2, 3},
				DType: mustDType(t, c.dtype), Compressor: comp, FillValue: raw(c.fill)})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			fill, _ := FillBytes(a.meta.DType, a.meta.FillValue)
			written := []int{1, 0}
			c, _ := a.ChunkShape(written)
			n, _ := rechunk.NumBytes(a.meta.DType, c)
			data := bytes.Repeat([]byte{0x5a}, n)
			if err := a.WriteChunk(written, rechunk.Chunk{DType: a.meta.DType, Shape: c, Data: data}); err != nil {
				t.Fatal(err)
			}
			eachIndex(a.Grid(), func(idx []int) { checkFilled(t, a, idx, written, fill, data) })
		})
	}
}

// checkFilled checks that chunk idx holds data if it is the written one and
// the fill value in every element otherwise.
func checkFilled(t *testing.T, a *Array, idx, written []int, fill, data []byte) {
	got, err := a.ReadChunk(idx)
	if err != nil {
		t.Fatal(err)
	}
	if idx[0] == written[0] && idx[1] == written[1] {
		if !bytes.Equal(got.Data, data) {
			t.Fatalf("written chunk %v reads differently", idx)
		}
		return
	}
	shape, _ := a.ChunkShape(idx)
	if want := int(shape[0]*shape[1]) * len(fill); len(got.Data) != want {
		t.Fatalf("chunk %v: %d bytes, want %d", idx, len(got.Data), want)
	}
	for e := 0; e < len(got.Data); e += len(fill) {
		if !bytes.Equal(got.Data[e:e+len(fill)], fill) {
			t.Fatalf("chunk %v element %d = % x, want fill % x", idx, e/len(fill), got.Data[e:e+len(fill)], fill)
		}
	}
}
