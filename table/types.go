package table

import (
	"fmt"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
)

// class is how this package treats a column type: the canonical form used by
// the hash, the comparison used by range rules and the layout used by Split.
type class uint8

const (
	classNone     class = iota
	classSigned         // int8..int64, date32, date64, timestamp: widened to int64
	classUnsigned       // uint8..uint64: widened to uint64
	classFloat          // float16, float32, float64: widened to float64
	classBool           // bool: bit-packed values
	classVar32          // string, binary: int32 offsets + data
	classVar64          // large_string, large_binary: int64 offsets + data
)

// colType describes a supported column type.
type colType struct {
	class class
	width int  // bytes per value for fixed-width classes; 0 otherwise
	text  bool // string or large_string (divisions are JSON strings)
}

// typeOf classifies dt; ok is false for unsupported types.
func typeOf(dt arrow.DataType) (colType, bool) {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64,
		arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP:
		return colType{class: classSigned, width: byteWidth(dt)}, true
	case arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return colType{class: classUnsigned, width: byteWidth(dt)}, true
	case arrow.FLOAT16, arrow.FLOAT32, arrow.FLOAT64:
		return colType{class: classFloat, width: byteWidth(dt)}, true
	case arrow.BOOL:
		return colType{class: classBool}, true
	case arrow.STRING:
		return colType{class: classVar32, text: true}, true
	case arrow.BINARY:
		return colType{class: classVar32}, true
	case arrow.LARGE_STRING:
		return colType{class: classVar64, text: true}, true
	case arrow.LARGE_BINARY:
		return colType{class: classVar64}, true
	}
	return colType{}, false
}

// byteWidth returns the width in bytes of a fixed-width type.
func byteWidth(dt arrow.DataType) int {
	fw, ok := dt.(arrow.FixedWidthDataType)
	if !ok {
		return 0
	}
	return fw.BitWidth() / 8
}

// supportedTypes lists the supported types for error messages.
const supportedTypes = "int8..int64, uint8..uint64, float16/32/64, bool, string, " +
	"large_string, binary, large_binary, date32, date64, timestamp"

// checkField returns an ErrUnsupportedType error naming f if its type is not
// supported.
func checkField(f arrow.Field) (colType, error) {
	ct, ok := typeOf(f.Type)
	if !ok {
		return ct, fmt.Errorf("%w: column %q has type %s (supported: %s)",
			ErrUnsupportedType, f.Name, f.Type, supportedTypes)
	}
	return ct, nil
}

// checkSupported checks that every field of schema has a supported type.
func checkSupported(schema *arrow.Schema) error {
	if schema == nil {
		return fmt.Errorf("%w: nil schema", ErrBadInput)
	}
	for _, f := range schema.Fields() {
		if _, err := checkField(f); err != nil {
			return err
		}
	}
	return nil
}

// CheckSchema reports whether got has the same columns as want: the same
// number of fields with the same names and types, in order. Nullability flags
// and metadata are ignored. The error wraps ErrSchemaMismatch and names the
// first difference.
func CheckSchema(want, got *arrow.Schema) error {
	if want == nil || got == nil {
		return fmt.Errorf("%w: nil schema", ErrSchemaMismatch)
	}
	if want.NumFields() != got.NumFields() {
		return fmt.Errorf("%w: %d columns, want %d", ErrSchemaMismatch, got.NumFields(), want.NumFields())
	}
	for i := range want.NumFields() {
		w, g := want.Field(i), got.Field(i)
		if w.Name != g.Name {
			return fmt.Errorf("%w: column %d is %q, want %q", ErrSchemaMismatch, i, g.Name, w.Name)
		}
		if !arrow.TypeEqual(w.Type, g.Type) {
			return fmt.Errorf("%w: column %q has type %s, want %s", ErrSchemaMismatch, g.Name, g.Type, w.Type)
		}
	}
	return nil
}

// schemaGate applies CheckSchema against a fixed schema, remembering the
// last schema pointer that passed so that records sharing a schema (the
// common case) are checked without comparing types again. Safe for
// concurrent use.
type schemaGate struct {
	want *arrow.Schema
	ok   atomic.Pointer[arrow.Schema]
}

// check returns CheckSchema(g.want, got), cached by pointer.
func (g *schemaGate) check(got *arrow.Schema) error {
	if got == g.want || got == g.ok.Load() {
		return nil
	}
	if err := CheckSchema(g.want, got); err != nil {
		return err
	}
	g.ok.Store(got)
	return nil
}
