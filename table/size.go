package table

import "github.com/apache/arrow-go/v18/arrow"

// RecordBytes is the size of a record's Arrow buffers, whole (a slice
// counts the buffers it shares): the bytes a job or benchmark reports as
// moved.
func RecordBytes(rec arrow.Record) int64 {
	var n int64
	for _, col := range rec.Columns() {
		for _, b := range col.Data().Buffers() {
			if b != nil {
				n += int64(b.Len())
			}
		}
	}
	return n
}
