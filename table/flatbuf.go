package table

import (
	"encoding/binary"
	"fmt"
)

// This file reads the few FlatBuffers tables of an Arrow IPC record batch
// message (Message, RecordBatch) with every offset bounds-checked, so that
// Decode can build arrays straight over the message body and garbage gives
// an error rather than a panic. Slot numbers follow Arrow's Message.fbs.

// fbTable is a FlatBuffers table at pos in buf with its vtable. Offsets are
// computed in uint32 arithmetic that wraps exactly as the FlatBuffers Go
// runtime does, so this reader sees the same structure Arrow's reader will.
type fbTable struct {
	buf     []byte
	pos, vt uint32
	vtSize  uint32 // bytes of the vtable
}

// errFB is the error for any malformed FlatBuffers structure.
func errFB(what string, pos uint32) error {
	return fmt.Errorf("%w: metadata %s at byte %d out of bounds", ErrCorrupt, what, pos)
}

// fits reports whether size bytes at pos lie inside buf.
func fits(buf []byte, pos uint32, size int) bool {
	return uint64(pos)+uint64(size) <= uint64(len(buf))
}

// u32At reads a little-endian uint32 at pos, which must fit.
func u32At(buf []byte, pos uint32) uint32 { return binary.LittleEndian.Uint32(buf[pos:]) }

// fbRoot returns the root table of buf.
func fbRoot(buf []byte) (fbTable, error) {
	if !fits(buf, 0, 4) {
		return fbTable{}, errFB("root", 0)
	}
	return fbTableAt(buf, u32At(buf, 0))
}

// fbTableAt returns the table starting at pos.
func fbTableAt(buf []byte, pos uint32) (fbTable, error) {
	if !fits(buf, pos, 4) {
		return fbTable{}, errFB("table", pos)
	}
	vt := uint32(int32(pos) - int32(u32At(buf, pos)))
	if !fits(buf, vt, 4) {
		return fbTable{}, errFB("vtable", vt)
	}
	size := uint32(binary.LittleEndian.Uint16(buf[vt:]))
	if !fits(buf, vt, int(size)) {
		return fbTable{}, errFB("vtable size", vt)
	}
	return fbTable{buf: buf, pos: pos, vt: vt, vtSize: size}, nil
}

// field returns the absolute position of slot's value, checking that size
// bytes are there; ok is false when the field is absent.
func (t fbTable) field(slot, size int) (p uint32, ok bool, err error) {
	voff := uint32(4 + 2*slot)
	if voff >= t.vtSize || !fits(t.buf, t.vt+voff, 2) {
		return 0, false, nil
	}
	off := uint32(binary.LittleEndian.Uint16(t.buf[t.vt+voff:]))
	if off == 0 {
		return 0, false, nil
	}
	p = t.pos + off
	if !fits(t.buf, p, size) {
		return 0, false, errFB("field", p)
	}
	return p, true, nil
}

// u8 reads a uint8 field, def when absent.
func (t fbTable) u8(slot int, def uint8) (uint8, error) {
	p, ok, err := t.field(slot, 1)
	if !ok {
		return def, err
	}
	return t.buf[p], nil
}

// i16 reads an int16 field, def when absent.
func (t fbTable) i16(slot int, def int16) (int16, error) {
	p, ok, err := t.field(slot, 2)
	if !ok {
		return def, err
	}
	return int16(binary.LittleEndian.Uint16(t.buf[p:])), nil
}

// i64 reads an int64 field, def when absent.
func (t fbTable) i64(slot int, def int64) (int64, error) {
	p, ok, err := t.field(slot, 8)
	if !ok {
		return def, err
	}
	return int64(binary.LittleEndian.Uint64(t.buf[p:])), nil
}

// ref follows an offset field to its target position; ok is false when
// absent.
func (t fbTable) ref(slot int) (uint32, bool, error) {
	p, ok, err := t.field(slot, 4)
	if !ok {
		return 0, false, err
	}
	return p + u32At(t.buf, p), true, nil
}

// table reads a sub-table field; ok is false when absent.
func (t fbTable) table(slot int) (sub fbTable, ok bool, err error) {
	p, ok, err := t.ref(slot)
	if !ok {
		return fbTable{}, false, err
	}
	sub, err = fbTableAt(t.buf, p)
	return sub, err == nil, err
}

// vector returns the start and length of a vector field whose elements take
// size bytes, checking that they all lie in the buffer; absent means empty.
func (t fbTable) vector(slot, size int) (start uint32, n int, err error) {
	p, ok, err := t.ref(slot)
	if !ok {
		return 0, 0, err
	}
	if !fits(t.buf, p, 4) {
		return 0, 0, errFB("vector", p)
	}
	n = int(u32At(t.buf, p))
	start = p + 4
	if !fits(t.buf, start, n*size) {
		return 0, 0, errFB("vector of "+fmt.Sprint(n), p)
	}
	return start, n, nil
}

// structs reads a vector of fixed-size structs of two int64s (FieldNode,
// Buffer); absent means empty.
func (t fbTable) structs(slot int) ([][2]int64, error) {
	start, n, err := t.vector(slot, 16)
	if err != nil {
		return nil, err
	}
	out := make([][2]int64, n)
	for i := range out {
		e := t.buf[int(start)+16*i:]
		out[i] = [2]int64{int64(binary.LittleEndian.Uint64(e)), int64(binary.LittleEndian.Uint64(e[8:]))}
	}
	return out, nil
}

// batchMeta is what Decode needs from a record batch message's metadata.
type batchMeta struct {
	rows       int64
	nodes      [][2]int64 // per column: length, null count
	buffers    [][2]int64 // offset and length within the body
	compressed bool
}

// Arrow FlatBuffers constants used by parseBatch.
const (
	fbMetadataV4   = 3 // MetadataVersion.V4
	fbMetadataV5   = 4 // MetadataVersion.V5
	fbSchema       = 1 // MessageHeader.Schema
	fbRecordBatch  = 3 // MessageHeader.RecordBatch
	slotMsgVersion = 0
	slotMsgType    = 1
	slotMsgHeader  = 2
	slotMsgBodyLen = 3
	slotRBLength   = 0
	slotRBNodes    = 1
	slotRBBuffers  = 2
	slotRBCompress = 3
)

// parseBatch reads a record batch message's metadata and checks its version,
// type and declared body length.
func parseBatch(meta []byte, bodyLen int) (batchMeta, error) {
	var bm batchMeta
	msg, err := fbRoot(meta)
	if err != nil {
		return bm, err
	}
	if err := checkHeader(msg, fbRecordBatch, bodyLen); err != nil {
		return bm, err
	}
	rb, ok, err := msg.table(slotMsgHeader)
	if err != nil || !ok {
		return bm, fmt.Errorf("%w: record batch message without header: %v", ErrCorrupt, err)
	}
	if bm.rows, err = rb.i64(slotRBLength, 0); err != nil {
		return bm, err
	}
	if bm.nodes, err = rb.structs(slotRBNodes); err != nil {
		return bm, err
	}
	if bm.buffers, err = rb.structs(slotRBBuffers); err != nil {
		return bm, err
	}
	_, bm.compressed, err = rb.table(slotRBCompress)
	return bm, err
}

// checkHeader checks the Message table's version, type and body length.
func checkHeader(msg fbTable, want uint8, bodyLen int) error {
	v, err := msg.i16(slotMsgVersion, 0)
	if err != nil {
		return err
	}
	typ, err := msg.u8(slotMsgType, 0)
	if err != nil {
		return err
	}
	n, err := msg.i64(slotMsgBodyLen, 0)
	switch {
	case err != nil:
		return err
	case v != fbMetadataV4 && v != fbMetadataV5:
		return fmt.Errorf("%w: metadata version %d", ErrCorrupt, v)
	case typ != want:
		return fmt.Errorf("%w: message type %d, want %d", ErrCorrupt, typ, want)
	case n != int64(bodyLen):
		return fmt.Errorf("%w: body of %d bytes, metadata says %d", ErrCorrupt, bodyLen, n)
	}
	return nil
}

// Slots and type tags of Arrow's Schema.fbs used by checkSchemaFB.
const (
	slotSchemaFields   = 1
	slotSchemaMeta     = 2
	slotFieldName      = 0
	slotFieldTypeTag   = 2
	slotFieldDict      = 4
	slotFieldChildren  = 5
	slotFieldMeta      = 6
	fbTypeInt          = 2
	fbTypeFloat        = 3
	fbTypeBinary       = 4
	fbTypeUtf8         = 5
	fbTypeBool         = 6
	fbTypeDate         = 8
	fbTypeTimestamp    = 10
	fbTypeLargeBinary  = 19
	fbTypeLargeUtf8    = 20
	maxSchemaMetaItems = 1 << 12
)

// checkSchemaFB walks a schema message's metadata before Arrow's reader
// does: Arrow allocates by vector lengths it does not check and recurses
// into children without a depth limit, which garbage could turn into a
// fatal out-of-memory or stack overflow. Only flat schemas of supported
// types pass.
func checkSchemaFB(meta []byte) error {
	msg, err := fbRoot(meta)
	if err != nil {
		return err
	}
	if err := checkHeader(msg, fbSchema, 0); err != nil {
		return err
	}
	sch, ok, err := msg.table(slotMsgHeader)
	if err != nil || !ok {
		return fmt.Errorf("%w: schema message without header: %v", ErrCorrupt, err)
	}
	if err := checkMetaVector(sch, slotSchemaMeta); err != nil {
		return err
	}
	start, n, err := sch.vector(slotSchemaFields, 4)
	if err != nil {
		return err
	}
	for i := range n {
		p := start + uint32(4*i)
		f, err := fbTableAt(meta, p+u32At(meta, p))
		if err != nil {
			return err
		}
		if err := checkFieldFB(f, i); err != nil {
			return err
		}
	}
	return nil
}

// checkFieldFB checks one Field table: a supported type, no dictionary, no
// children, bounded metadata. Its errors name the column.
func checkFieldFB(f fbTable, i int) error {
	tag, err := f.u8(slotFieldTypeTag, 0)
	if err != nil {
		return err
	}
	col := fieldName(f, i)
	switch tag {
	case fbTypeInt, fbTypeFloat, fbTypeBinary, fbTypeUtf8, fbTypeBool, fbTypeDate, fbTypeTimestamp, fbTypeLargeBinary, fbTypeLargeUtf8:
	default:
		return fmt.Errorf("%w: %s has type %s (supported: %s)", ErrUnsupportedType, col, typeName(tag), supportedTypes)
	}
	if _, dict, err := f.table(slotFieldDict); err != nil || dict {
		return fmt.Errorf("%w: %s is dictionary-encoded or corrupt (%v)", ErrUnsupportedType, col, err)
	}
	if _, n, err := f.vector(slotFieldChildren, 4); err != nil || n > 0 {
		return fmt.Errorf("%w: %s has %d children or corrupt ones (%v)", ErrUnsupportedType, col, n, err)
	}
	return checkMetaVector(f, slotFieldMeta)
}

// maxNameInError bounds the bytes of a column name quoted in an error.
const maxNameInError = 256

// fieldName is how an error names field i: `column "name" (field i)`, or
// `field i` when its name is absent or out of bounds.
func fieldName(f fbTable, i int) string {
	start, n, err := f.vector(slotFieldName, 1)
	if err != nil || n == 0 {
		return fmt.Sprintf("field %d", i)
	}
	name := f.buf[start : start+uint32(min(n, maxNameInError))]
	return fmt.Sprintf("column %q (field %d)", name, i)
}

// fbTypeNames are the names of Arrow's Schema.fbs Type union, by tag.
var fbTypeNames = [...]string{"none", "null", "int", "floating point", "binary", "utf8", "bool",
	"decimal", "date", "time", "timestamp", "interval", "list", "struct", "union",
	"fixed-size binary", "fixed-size list", "map", "duration", "large binary", "large utf8",
	"large list", "run-end encoded", "binary view", "utf8 view", "list view", "large list view"}

// typeName names a Type union tag.
func typeName(tag uint8) string {
	if int(tag) < len(fbTypeNames) {
		return fbTypeNames[tag]
	}
	return fmt.Sprintf("tag %d", tag)
}

// checkMetaVector bounds a custom_metadata vector.
func checkMetaVector(t fbTable, slot int) error {
	_, n, err := t.vector(slot, 4)
	if err == nil && n > maxSchemaMetaItems {
		err = fmt.Errorf("%w: %d metadata items", ErrCorrupt, n)
	}
	return err
}
