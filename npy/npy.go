package npy

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/shufflenode/shufflenode/rechunk"
)

const magic = "\x93NUMPY"

// maxHeader bounds the header a reader accepts.
const maxHeader = 1 << 20

// Header is a .npy header.
type Header struct {
	DType rechunk.DType
	Shape []int64
}

// DecodeHeader parses the header at the start of b and returns it and its
// length in bytes (where the data starts). The error wraps ErrFormat or
// ErrFortran.
func DecodeHeader(b []byte) (Header, int, error) {
	if len(b) < 10 || string(b[:6]) != magic {
		return Header{}, 0, fmt.Errorf("%w: bad magic", ErrFormat)
	}
	var n, start int
	switch b[6] {
	case 1:
		n, start = int(binary.LittleEndian.Uint16(b[8:10])), 10
	case 2, 3:
		if len(b) < 12 {
			return Header{}, 0, fmt.Errorf("%w: short header", ErrFormat)
		}
		n, start = int(binary.LittleEndian.Uint32(b[8:12])), 12
	default:
		return Header{}, 0, fmt.Errorf("%w: version %d.%d", ErrFormat, b[6], b[7])
	}
	if n > maxHeader || start+n > len(b) {
		return Header{}, 0, fmt.Errorf("%w: header of %d bytes", ErrFormat, n)
	}
	h, err := parseDict(string(b[start : start+n]))
	return h, start + n, err
}

// parseDict reads the dict literal {'descr': '<f8', 'fortran_order':
// False, 'shape': (3, 4), }.
func parseDict(s string) (Header, error) {
	descr, ok1 := field(s, "descr")
	fortran, ok2 := field(s, "fortran_order")
	shape, ok3 := field(s, "shape")
	if !ok1 || !ok2 || !ok3 {
		return Header{}, fmt.Errorf("%w: header %q lacks descr, fortran_order or shape", ErrFormat, s)
	}
	if fortran != "False" {
		return Header{}, ErrFortran
	}
	dt, err := rechunk.ParseDType(strings.Trim(descr, `'"`))
	if err != nil {
		return Header{}, fmt.Errorf("%w: %w", ErrFormat, err)
	}
	sh, err := parseShape(shape)
	return Header{DType: dt, Shape: sh}, err
}

// field returns the value text of key in the dict literal: up to the next
// top-level comma or the closing brace.
func field(s, key string) (string, bool) {
	i := strings.Index(s, "'"+key+"'")
	if i < 0 {
		return "", false
	}
	rest := strings.TrimLeft(s[i+len(key)+2:], " ")
	if !strings.HasPrefix(rest, ":") {
		return "", false
	}
	rest = strings.TrimLeft(rest[1:], " ")
	depth := 0
	for j, c := range rest {
		switch {
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth == 0 {
				return rest[:j+1], true
			}
		case (c == ',' || c == '}') && depth == 0:
			return strings.TrimSpace(rest[:j]), true
		}
	}
	return "", false
}

// parseShape reads a tuple literal such as (), (5,) or (3, 4).
func parseShape(s string) ([]int64, error) {
	if len(s) < 2 || s[0] != '(' || s[len(s)-1] != ')' {
		return nil, fmt.Errorf("%w: shape %q", ErrFormat, s)
	}
	shape := []int64{}
	for _, p := range strings.Split(s[1:len(s)-1], ",") {
		if p = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(p), "L")); p == "" {
			continue
		}
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%w: shape %q", ErrFormat, s)
		}
		shape = append(shape, n)
	}
	return shape, nil
}

// AppendHeader appends a version 1.0 header (2.0 if it needs more than
// 65535 bytes) for h, padded so the data starts at a multiple of 64.
func AppendHeader(b []byte, h Header) []byte {
	parts := make([]string, len(h.Shape))
	for i, n := range h.Shape {
		parts[i] = strconv.FormatInt(n, 10)
	}
	shape := "(" + strings.Join(parts, ", ")
	if len(parts) == 1 {
		shape += ","
	}
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s), }", h.DType, shape)
	version, lenBytes := byte(1), 2
	if len(dict)+12 > 65535 {
		version, lenBytes = 2, 4
	}
	pre := 8 + lenBytes
	pad := 64 - (pre+len(dict)+1)%64
	if pad == 64 {
		pad = 0
	}
	dict += strings.Repeat(" ", pad) + "\n"
	b = append(b, magic...)
	b = append(b, version, 0)
	if lenBytes == 2 {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(dict)))
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(dict)))
	}
	return append(b, dict...)
}

// ReadHeader reads the header of file path.
func ReadHeader(path string) (Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, err
	}
	defer f.Close()
	b := make([]byte, 4096)
	n, err := io.ReadFull(f, b)
	if err != nil && err != io.ErrUnexpectedEOF {
		return Header{}, fmt.Errorf("%s: %w", path, err)
	}
	h, _, err := DecodeHeader(b[:n])
	if err != nil {
		return Header{}, fmt.Errorf("%s: %w", path, err)
	}
	return h, nil
}

// ReadFile reads a whole .npy file as a chunk. The error wraps ErrFormat,
// ErrFortran or an I/O error.
func ReadFile(path string) (rechunk.Chunk, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return rechunk.Chunk{}, err
	}
	h, start, err := DecodeHeader(b)
	if err != nil {
		return rechunk.Chunk{}, fmt.Errorf("%s: %w", path, err)
	}
	c := rechunk.Chunk{DType: h.DType, Shape: h.Shape, Data: b[start:]}
	if err := c.Validate(); err != nil {
		return rechunk.Chunk{}, fmt.Errorf("%s: %w: %w", path, ErrFormat, err)
	}
	return c, nil
}

// WriteFile writes c as a .npy file.
func WriteFile(path string, c rechunk.Chunk) error {
	var buf bytes.Buffer
	buf.Write(AppendHeader(nil, Header{DType: c.DType, Shape: c.Shape}))
	buf.Write(c.Data)
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
