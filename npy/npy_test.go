package npy

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/shufflenode/shufflenode/rechunk"
)

// A header as numpy 1.26 writes it for np.zeros((3, 4), '<f8').
const numpyHeader = "\x93NUMPY\x01\x00v\x00{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }" +
	"                                                            \n"

func TestDecodeNumpyHeader(t *testing.T) {
	h, n, err := DecodeHeader([]byte(numpyHeader))
	if err != nil || n != 128 || h.DType.String() != "<f8" || fmt.Sprint(h.Shape) != "[3 4]" {
		t.Fatalf("%+v %d %v", h, n, err)
	}
}

func TestRoundTrip(t *testing.T) {
	for _, shape := range [][]int64{{}, {5}, {3, 4}, {2, 0, 7}} {
		dt, _ := rechunk.ParseDType(">i2")
		c, _ := rechunk.NewChunk(dt, shape)
		for i := range c.Data {
			c.Data[i] = byte(i)
		}
		path := filepath.Join(t.TempDir(), "a.npy")
		if err := WriteFile(path, c); err != nil {
			t.Fatal(err)
		}
		got, err := ReadFile(path)
		if err != nil || fmt.Sprint(got.Shape) != fmt.Sprint(c.Shape) || !bytes.Equal(got.Data, c.Data) || got.DType != c.DType {
			t.Fatalf("shape %v: got %+v, %v", shape, got, err)
		}
		if b := AppendHeader(nil, Header{DType: dt, Shape: shape}); len(b)%64 != 0 {
			t.Fatalf("header of %d bytes", len(b))
		}
	}
}

func TestBadHeaders(t *testing.T) {
	for name, tc := range map[string]struct {
		b    string
		want error
	}{
		"magic":   {"NUMPY\x01\x00\x00\x00", ErrFormat},
		"fortran": {hdr("{'descr': '<f8', 'fortran_order': True, 'shape': (3,), }"), ErrFortran},
		"dtype":   {hdr("{'descr': 'O', 'fortran_order': False, 'shape': (3,), }"), ErrFormat},
		"shape":   {hdr("{'descr': '<f8', 'fortran_order': False, 'shape': (3, -1), }"), ErrFormat},
		"no key":  {hdr("{'descr': '<f8', 'shape': (3,), }"), ErrFormat},
		"length":  {"\x93NUMPY\x01\x00\xff\x00{}", ErrFormat},
	} {
		if _, _, err := DecodeHeader([]byte(tc.b)); !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", name, err, tc.want)
		}
	}
}

// FuzzDecodeHeader: the header decoder never panics, and what it accepts
// it writes back to an equal header.
func FuzzDecodeHeader(f *testing.F) {
	f.Add([]byte(numpyHeader))
	f.Add(AppendHeader(nil, Header{DType: mustDType("|u1"), Shape: []int64{7}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, _, err := DecodeHeader(b)
		if err != nil {
			return
		}
		again, _, err := DecodeHeader(AppendHeader(nil, h))
		if err != nil || fmt.Sprint(again) != fmt.Sprint(h) {
			t.Fatalf("%q: %+v, again %+v, %v", b, h, again, err)
		}
	})
}

// hdr is a version 1.0 header around dict.
func hdr(dict string) string {
	return "\x93NUMPY\x01\x00" + string([]byte{byte(len(dict)), 0}) + dict
}

func mustDType(s string) rechunk.DType {
	dt, _ := rechunk.ParseDType(s)
	return dt
}
