package zarr

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/shufflenode/shufflenode/rechunk"
)

// FillBytes returns the bytes of one element of dtype dt equal to the JSON
// fill value fill, in dt's byte order. Accepted fill values:
//
//   - null (or an empty fill): zero bytes, for every dtype;
//   - integers ('i', 'u'): a JSON number with an integral value in range;
//   - floats ('f'): a JSON number, "NaN", "Infinity" or "-Infinity";
//   - bools ('b'): true, false, 0 or 1;
//   - complex ('c'): [re, im] with each part as for floats, or a single
//     float value (imaginary part 0).
//
// The error wraps ErrFillValue, or ErrDType if dt is invalid.
func FillBytes(dt rechunk.DType, fill json.RawMessage) ([]byte, error) {
	if _, err := rechunk.NumBytes(dt, nil); err != nil {
		return nil, fmt.Errorf("dtype %q: %w: %w", dt, ErrDType, err)
	}
	out := make([]byte, dt.ItemSize())
	if isNull(fill) {
		return out, nil
	}
	fill = bytes.TrimSpace(fill)
	var err error
	switch dt.Kind() {
	case 'b':
		err = boolFill(out, fill)
	case 'i', 'u':
		err = intFill(out, dt, fill)
	case 'f':
		err = floatFill(out, dt, fill)
	case 'c':
		err = complexFill(out, dt, fill)
	}
	if err != nil {
		return nil, fmt.Errorf("fill_value %s for %s: %w", fill, dt, err)
	}
	return out, nil
}

// boolFill sets out[0] from true, false, 0 or 1.
func boolFill(out []byte, fill []byte) error {
	switch string(fill) {
	case "true", "1":
		out[0] = 1
	case "false", "0":
		out[0] = 0
	default:
		return ErrFillValue
	}
	return nil
}

// intFill puts an integral JSON number, range-checked for dt, into out.
func intFill(out []byte, dt rechunk.DType, fill []byte) error {
	s, ok := jsonNumber(fill)
	if !ok {
		return ErrFillValue
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && f == math.Trunc(f) && !isIntLiteral(s) {
		s = strconv.FormatFloat(f, 'f', -1, 64) // 1e3 or 7.0: an integral value
	}
	bits := 8 * dt.ItemSize()
	var u uint64
	var err error
	if dt.Kind() == 'i' {
		var v int64
		v, err = strconv.ParseInt(s, 10, bits)
		u = uint64(v)
	} else {
		u, err = strconv.ParseUint(s, 10, bits)
	}
	if err != nil {
		return ErrFillValue
	}
	putUint(out, dt.ByteOrder(), u)
	return nil
}

// floatFill puts a float fill value into out (4 or 8 bytes).
func floatFill(out []byte, dt rechunk.DType, fill []byte) error {
	f, err := parseFloatFill(fill, 8*dt.ItemSize())
	if err != nil {
		return err
	}
	putFloat(out, dt.ByteOrder(), f)
	return nil
}

// complexFill puts [re, im] (or a single float) into out.
func complexFill(out []byte, dt rechunk.DType, fill []byte) error {
	parts := []json.RawMessage{fill, []byte("0")}
	if len(fill) > 0 && fill[0] == '[' {
		parts = nil
		if json.Unmarshal(fill, &parts) != nil || len(parts) != 2 {
			return ErrFillValue
		}
	}
	half := dt.ItemSize() / 2
	for i, p := range parts {
		f, err := parseFloatFill(bytes.TrimSpace(p), 8*half)
		if err != nil {
			return err
		}
		putFloat(out[i*half:(i+1)*half], dt.ByteOrder(), f)
	}
	return nil
}

// parseFloatFill parses a JSON number or "NaN", "Infinity", "-Infinity",
// rounded to a float of the given bits (32 or 64); a finite number out of
// range is refused.
func parseFloatFill(fill []byte, bits int) (float64, error) {
	switch string(fill) {
	case `"NaN"`:
		return math.NaN(), nil
	case `"Infinity"`:
		return math.Inf(1), nil
	case `"-Infinity"`:
		return math.Inf(-1), nil
	}
	s, ok := jsonNumber(fill)
	if !ok {
		return 0, ErrFillValue
	}
	f, err := strconv.ParseFloat(s, bits)
	if err != nil {
		return 0, ErrFillValue
	}
	return f, nil
}

// jsonNumber returns fill as a string if it is one JSON number.
func jsonNumber(fill []byte) (string, bool) {
	if len(fill) == 0 || (fill[0] != '-' && (fill[0] < '0' || fill[0] > '9')) || !json.Valid(fill) {
		return "", false
	}
	return string(fill), true
}

// isIntLiteral reports whether a JSON number has no fraction or exponent.
func isIntLiteral(s string) bool {
	return !bytes.ContainsAny([]byte(s), ".eE")
}

// putFloat writes f as a float of len(out) bytes (4 or 8). NaN is written
// as the quiet NaN NumPy uses (0x7ff8000000000000, 0x7fc00000).
func putFloat(out []byte, order byte, f float64) {
	switch {
	case math.IsNaN(f) && len(out) == 4:
		putUint(out, order, 0x7fc00000)
	case math.IsNaN(f):
		putUint(out, order, 0x7ff8000000000000)
	case len(out) == 4:
		putUint(out, order, uint64(math.Float32bits(float32(f))))
	default:
		putUint(out, order, math.Float64bits(f))
	}
}

// putUint writes the low len(out) bytes of u in the given byte order.
func putUint(out []byte, order byte, u uint64) {
	var b [8]byte
	if order == '>' {
		binary.BigEndian.PutUint64(b[:], u)
		copy(out, b[8-len(out):])
		return
	}
	binary.LittleEndian.PutUint64(b[:], u)
	copy(out, b[:len(out)])
}
