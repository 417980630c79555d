package table

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// validateRecord checks that every column of a decoded record is
// structurally sound for the code of this package and for Arrow's
// accessors: buffer sizes cover the rows, null counts match the validity
// bitmap, variable-width offsets ascend within the data. Errors wrap
// ErrCorrupt and name the column.
func validateRecord(rec arrow.Record) error {
	for i, col := range rec.Columns() {
		if int64(col.Len()) != rec.NumRows() {
			return fmt.Errorf("%w: column %q has %d rows, record %d", ErrCorrupt, rec.ColumnName(i), col.Len(), rec.NumRows())
		}
		if err := validateData(col.Data()); err != nil {
			return fmt.Errorf("%w: column %q: %v", ErrCorrupt, rec.ColumnName(i), err)
		}
	}
	return nil
}

// validateData checks the data of one array of a supported type.
func validateData(d arrow.ArrayData) error {
	n, off := d.Len(), d.Offset()
	if n < 0 || off < 0 {
		return fmt.Errorf("length %d offset %d", n, off)
	}
	if err := validateNulls(d, n, off); err != nil {
		return err
	}
	ct, ok := typeOf(d.DataType())
	if !ok {
		return fmt.Errorf("type %s not supported", d.DataType())
	}
	switch ct.class {
	case classBool:
		return needBytes("values", bufBytes(d, 1), bitutil.BytesForBits(int64(off+n)))
	case classVar32:
		return validateVar(d, n, off, 4, func(b []byte) []int32 { return asI32(b) })
	case classVar64:
		return validateVar(d, n, off, 8, func(b []byte) []int64 { return asI64(b) })
	}
	return needBytes("values", bufBytes(d, 1), int64(off+n)*int64(ct.width))
}

// validateNulls checks that the validity bitmap, if any, covers the rows and
// agrees with the null count.
func validateNulls(d arrow.ArrayData, n, off int) error {
	bitmap := bufBytes(d, 0)
	nulls := d.NullN()
	if bitmap == nil {
		if nulls != 0 {
			return fmt.Errorf("%d nulls without a validity bitmap", nulls)
		}
		return nil
	}
	if err := needBytes("validity", bitmap, bitutil.BytesForBits(int64(off+n))); err != nil {
		return err
	}
	if got := n - bitutil.CountSetBits(bitmap, off, n); got != nulls {
		return fmt.Errorf("null count %d, bitmap has %d", nulls, got)
	}
	return nil
}

// validateVar checks the offsets of a variable-width array: enough of them,
// ascending, within the data buffer.
func validateVar[O offset](d arrow.ArrayData, n, off, width int, cast func([]byte) []O) error {
	if n == 0 {
		return nil
	}
	ob := bufBytes(d, 1)
	if err := needBytes("offsets", ob, int64(off+n+1)*int64(width)); err != nil {
		return err
	}
	offs := cast(ob)[off : off+n+1]
	if offs[0] < 0 {
		return fmt.Errorf("first offset %d < 0", offs[0])
	}
	for i := 1; i <= n; i++ {
		if offs[i] < offs[i-1] {
			return fmt.Errorf("offset %d (%d) below offset %d (%d)", i, offs[i], i-1, offs[i-1])
		}
	}
	if last := int64(offs[n]); last > int64(len(bufBytes(d, 2))) {
		return fmt.Errorf("last offset %d beyond %d data bytes", last, len(bufBytes(d, 2)))
	}
	return nil
}

// needBytes checks that buffer b has at least want bytes.
func needBytes(name string, b []byte, want int64) error {
	if int64(len(b)) < want {
		return fmt.Errorf("%s buffer has %d bytes, need %d", name, len(b), want)
	}
	return nil
}
