package rechunk

import (
	"errors"
	"testing"
)

var allDTypes = []string{"<f8", "<f4", "<i8", "<i4", "<i2", "|i1", "<u8", "<u4", "<u2", "|u1", "|b1", "<c8", "<c16",
	">f8", ">f4", ">i8", ">i4", ">i2", ">u8", ">u4", ">u2", ">c8", ">c16"}

func TestParseDType(t *testing.T) {
	sizes := map[string]int{"<f8": 8, "<f4": 4, "|i1": 1, "<c16": 16, ">c8": 8, "|b1": 1, ">u2": 2}
	for _, s := range allDTypes {
		t.Run(s, func(t *testing.T) {
			d, err := ParseDType(s)
			if err != nil {
				t.Fatal(err)
			}
			if d.String() != s || d.ByteOrder() != s[0] || d.Kind() != s[1] {
				t.Fatalf("got %q order %c kind %c", d, d.ByteOrder(), d.Kind())
			}
			if want, ok := sizes[s]; ok && d.ItemSize() != want {
				t.Fatalf("item size %d, want %d", d.ItemSize(), want)
			}
		})
	}
}

func TestParseDTypeRejects(t *testing.T) {
	for _, s := range []string{"", "f8", "<f", "<f2", "<f16", "<i1", "|i2", ">i1", "=f8", "<x8", "|b2", "<c4",
		"<f08", "<f+8", "<f8 ", " <f8", "<u3", "|u256", "<f8\x00", "<U8", "|S1", "<M8"} {
		t.Run(s, func(t *testing.T) {
			if d, err := ParseDType(s); !errors.Is(err, ErrDType) {
				t.Fatalf("ParseDType(%q) = %v, %v; want ErrDType", s, d, err)
			}
		})
	}
}

func TestZeroDType(t *testing.T) {
	var d DType
	if d.String() != "" || d.ItemSize() != 0 {
		t.Fatalf("zero DType: %q %d", d, d.ItemSize())
	}
	if _, err := NewChunk(d, []int64{1}); !errors.Is(err, ErrDType) {
		t.Fatalf("NewChunk with zero dtype: %v", err)
	}
}

func FuzzParseDType(f *testing.F) {
	for _, s := range allDTypes {
		f.Add(s)
	}
	f.Add("<f08")
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDType(s)
		if err != nil {
			if !errors.Is(err, ErrDType) {
				t.Fatalf("ParseDType(%q): %v does not wrap ErrDType", s, err)
			}
			return
		}
		if d.String() != s || d.ItemSize() < 1 || d.ItemSize() > 16 {
			t.Fatalf("ParseDType(%q) = %q, size %d", s, d, d.ItemSize())
		}
	})
}
