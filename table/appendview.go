package table

import "github.com/apache/arrow-go/v18/arrow/bitutil"

// Views returns the column views of the rows appended so far and their
// count: what ViewOf(Record()) gives, without building the record's
// arrays (a read of a small partition built one per chunk and column, a
// third of its cost beyond its rows). Like a Record, the views stay valid
// and unchanged while later Appends happen, and they alias the appender's
// buffers: they are valid as long as those are (the allocator's memory
// given to NewAppenderAlloc included).
func (a *Appender) Views() ([]ColumnView, int64) {
	out := make([]ColumnView, len(a.cols))
	for i := range a.cols {
		out[i] = a.cols[i].view(a.rows)
	}
	a.shared = a.rows%8 != 0
	return out, a.rows
}

// view is the column's first n rows as a view, as viewColumn gives it of
// array(dt, n).
func (c *appendCol) view(n int64) ColumnView {
	var v ColumnView
	if c.nulls > 0 {
		v.Valid = capped(c.valid[:bitutil.BytesForBits(n)])
	}
	switch c.ct.class {
	case classBool:
		if n > 0 {
			v.Bits = capped(c.values[:bitutil.BytesForBits(n)])
		}
	case classVar32:
		v.Offs32, v.Data = []int32{0}, nil
		if n > 0 {
			v.Offs32, v.Data = c.offs32[:n+1:n+1], capped(c.data)
		}
	case classVar64:
		v.Offs64, v.Data = []int64{0}, nil
		if n > 0 {
			v.Offs64, v.Data = c.offs64[:n+1:n+1], capped(c.data)
		}
	default:
		if n > 0 {
			v.Fixed = capped(c.values[:n*int64(c.ct.width)])
		}
	}
	return v
}

// capped is b with its capacity cut to its length: no reader of it can
// reach bytes appended later.
func capped(b []byte) []byte { return b[:len(b):len(b)] }
