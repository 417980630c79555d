package table

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
)

// parseDivisions parses the P-1 Range boundaries for column f and checks
// that they ascend (equal neighbours are allowed: they leave a partition
// empty).
func (c *compiled) parseDivisions(f arrow.Field, raw []json.RawMessage) error {
	if len(raw) != c.p-1 {
		return fmt.Errorf("%w: range column %q: %d divisions for %d partitions, want %d",
			ErrBadRule, f.Name, len(raw), c.p, c.p-1)
	}
	var err error
	switch c.types[0].class {
	case classSigned:
		c.div.i, err = parseEach(f, raw, parseSigned)
		if err == nil {
			err = checkOrder(f, c.div.i, func(a, b int64) bool { return a <= b })
		}
		c.div.ord = newKeyIndex(orderKeys(c.div.i, signedKey))
	case classUnsigned:
		c.div.u, err = parseEach(f, raw, parseUnsigned)
		if err == nil {
			err = checkOrder(f, c.div.u, func(a, b uint64) bool { return a <= b })
		}
		c.div.ord = newKeyIndex(c.div.u)
	case classFloat:
		c.div.f, err = parseEach(f, raw, parseFloat)
		if err == nil {
			err = checkOrder(f, c.div.f, func(a, b float64) bool { return a <= b })
		}
		c.div.ord = newKeyIndex(orderKeys(c.div.f, floatKey))
	case classBool:
		c.div.u, err = parseEach(f, raw, parseBool)
		if err == nil {
			err = checkOrder(f, c.div.u, func(a, b uint64) bool { return a <= b })
		}
	default:
		c.div.s, err = parseEach(f, raw, parseBytes)
		if err == nil {
			err = checkOrder(f, c.div.s, func(a, b []byte) bool { return bytes.Compare(a, b) <= 0 })
		}
	}
	return err
}

// parseEach parses every division with parse, naming the column and the
// division index on failure.
func parseEach[T any](f arrow.Field, raw []json.RawMessage, parse func(arrow.DataType, json.RawMessage) (T, error)) ([]T, error) {
	out := make([]T, len(raw))
	for i, m := range raw {
		v, err := parse(f.Type, m)
		if err != nil {
			return nil, fmt.Errorf("%w: range column %q (%s): division %d %s: %v",
				ErrBadRule, f.Name, f.Type, i, truncate(m), err)
		}
		out[i] = v
	}
	return out, nil
}

// checkOrder checks that divisions are ascending under le.
func checkOrder[T any](f arrow.Field, div []T, le func(a, b T) bool) error {
	for i := 1; i < len(div); i++ {
		if !le(div[i-1], div[i]) {
			return fmt.Errorf("%w: range column %q: division %d is below division %d (divisions must ascend)",
				ErrBadRule, f.Name, i, i-1)
		}
	}
	return nil
}

// truncate shortens a raw JSON value for an error message.
func truncate(m json.RawMessage) string {
	if len(m) > 40 {
		return string(m[:40]) + "..."
	}
	return string(m)
}

// jsonNumber returns m as a JSON number literal, or an error if m is not one.
func jsonNumber(m json.RawMessage) (string, error) {
	s := string(bytes.TrimSpace(m))
	if s == "" || !(s[0] == '-' || s[0] >= '0' && s[0] <= '9') || !json.Valid([]byte(s)) {
		return "", fmt.Errorf("is not a JSON number")
	}
	return s, nil
}

// parseSigned parses an integer division for a signed, date or timestamp
// column and checks its range against the column's width.
func parseSigned(dt arrow.DataType, m json.RawMessage) (int64, error) {
	s, err := jsonNumber(m)
	if err != nil {
		return 0, err
	}
	bits := byteWidth(dt) * 8
	v, err := strconv.ParseInt(s, 10, bits)
	if err != nil {
		return 0, fmt.Errorf("is not an integer of %d bits", bits)
	}
	return v, nil
}

// parseUnsigned parses an unsigned integer division.
func parseUnsigned(dt arrow.DataType, m json.RawMessage) (uint64, error) {
	s, err := jsonNumber(m)
	if err != nil {
		return 0, err
	}
	bits := byteWidth(dt) * 8
	v, err := strconv.ParseUint(s, 10, bits)
	if err != nil {
		return 0, fmt.Errorf("is not an unsigned integer of %d bits", bits)
	}
	return v, nil
}

// parseFloat parses a float division; it must be finite. Keys are compared
// with divisions as float64.
func parseFloat(dt arrow.DataType, m json.RawMessage) (float64, error) {
	s, err := jsonNumber(m)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, fmt.Errorf("is not a finite float")
	}
	return v, nil
}

// parseBool parses a JSON true/false division as 1/0.
func parseBool(_ arrow.DataType, m json.RawMessage) (uint64, error) {
	var b bool
	if err := json.Unmarshal(m, &b); err != nil {
		return 0, fmt.Errorf("is not a JSON boolean")
	}
	if b {
		return 1, nil
	}
	return 0, nil
}

// parseBytes parses a JSON string division; its UTF-8 bytes are compared
// with the column's bytes.
func parseBytes(_ arrow.DataType, m json.RawMessage) ([]byte, error) {
	var s string
	if err := json.Unmarshal(m, &s); err != nil {
		return nil, fmt.Errorf("is not a JSON string")
	}
	return []byte(s), nil
}
