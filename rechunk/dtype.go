package rechunk

import (
	"fmt"
	"strconv"
)

// DType is a NumPy array-interface type string: byte order ('<' little, '>'
// big, '|' not applicable), kind ('f' float, 'i' signed, 'u' unsigned, 'b'
// bool, 'c' complex) and item size in bytes. The zero DType is invalid.
// DTypes compare with ==.
type DType struct {
	order, kind byte
	size        uint8
}

// ParseDType parses one of <f8 <f4 <i8 <i4 <i2 |i1 <u8 <u4 <u2 |u1 |b1 <c8
// <c16, or the same multi-byte types with '>' byte order. The error wraps
// ErrDType.
func ParseDType(s string) (DType, error) {
	if len(s) < 3 {
		return DType{}, fmt.Errorf("%q: %w", s, ErrDType)
	}
	size, err := strconv.ParseUint(s[2:], 10, 8)
	d := DType{order: s[0], kind: s[1], size: uint8(size)}
	if err != nil || d.String() != s || !d.valid() {
		return DType{}, fmt.Errorf("%q: %w", s, ErrDType)
	}
	return d, nil
}

// valid reports whether d is one of the supported dtypes.
func (d DType) valid() bool {
	if (d.size == 1) != (d.order == '|') || (d.order != '|' && d.order != '<' && d.order != '>') {
		return false
	}
	switch d.kind {
	case 'f':
		return d.size == 4 || d.size == 8
	case 'i', 'u':
		return d.size == 1 || d.size == 2 || d.size == 4 || d.size == 8
	case 'b':
		return d.size == 1
	case 'c':
		return d.size == 8 || d.size == 16
	}
	return false
}

// String returns the dtype string, as ParseDType accepts it ("" for the zero
// DType).
func (d DType) String() string {
	if d == (DType{}) {
		return ""
	}
	return string([]byte{d.order, d.kind}) + strconv.Itoa(int(d.size))
}

// ItemSize returns the size of one element in bytes (0 for the zero DType).
func (d DType) ItemSize() int { return int(d.size) }

// Kind returns the kind character: 'f', 'i', 'u', 'b' or 'c'.
func (d DType) Kind() byte { return d.kind }

// ByteOrder returns the byte-order character: '<', '>' or '|'.
func (d DType) ByteOrder() byte { return d.order }
