package table

import (
	"encoding/json"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// RuleKind names how rows map to output partitions.
type RuleKind string

// The partitioning rule kinds.
const (
	// Hash routes a row by the stable hash of one or more key columns (see
	// the package documentation for the exact definition).
	Hash RuleKind = "hash"
	// Range routes a row by where its key falls among sorted divisions.
	Range RuleKind = "range"
	// Column routes a row to the partition named by an integer column.
	Column RuleKind = "column"
)

// Rule maps the rows of a dataframe to output partitions. It is part of a
// shuffle's spec and travels as JSON.
type Rule struct {
	// Kind is Hash, Range or Column.
	Kind RuleKind `json:"kind"`
	// Columns names the key columns: one or more for Hash, exactly one for
	// Range and Column.
	Columns []string `json:"columns"`
	// Divisions holds, for Range, the P-1 strictly ascending boundaries as
	// JSON numbers (numeric, date and timestamp columns; dates and timestamps
	// in their stored integer unit) or JSON strings (string and binary
	// columns). Partition i receives keys in [Divisions[i-1], Divisions[i]);
	// the first partition is open below and the last open above. Nulls go to
	// the last partition. Empty for other kinds.
	Divisions []json.RawMessage `json:"divisions,omitempty"`
}

// Validate checks the rule against a schema and a partition count. Errors wrap
// ErrBadRule or ErrUnsupportedType and name the column and what is wrong.
func (r Rule) Validate(schema *arrow.Schema, partitions int) error {
	_, err := compileRule(schema, r, partitions)
	return err
}

// maxPartitions bounds P so that partition ids fit comfortably in uint32 and
// int32 arithmetic.
const maxPartitions = 1 << 31

// compiled is a Rule resolved against a schema: column indices, column types
// and, for Range, parsed divisions.
type compiled struct {
	kind  RuleKind
	p     int
	cols  []int
	types []colType
	div   divisions
}

// divisions holds parsed Range boundaries in the comparison domain of the
// column class; exactly one slice is set.
type divisions struct {
	i []int64   // classSigned
	u []uint64  // classUnsigned and classBool (false=0, true=1)
	f []float64 // classFloat
	s [][]byte  // classVar32 and classVar64
	// ord indexes the order keys (see placeKeys) of i or f, and u itself
	// for classUnsigned: what the fixed-width searches compare.
	ord *keyIndex
}

// compileRule validates r against schema and partitions and resolves it.
func compileRule(schema *arrow.Schema, r Rule, partitions int) (*compiled, error) {
	if schema == nil {
		return nil, fmt.Errorf("%w: nil schema", ErrBadRule)
	}
	if partitions < 1 || partitions > maxPartitions {
		return nil, fmt.Errorf("%w: %d partitions, want 1..%d", ErrBadRule, partitions, maxPartitions)
	}
	c := &compiled{kind: r.Kind, p: partitions}
	if err := c.resolveColumns(schema, r); err != nil {
		return nil, err
	}
	if err := c.checkKind(schema, r); err != nil {
		return nil, err
	}
	return c, nil
}

// resolveColumns checks the column list for its count, names, duplicates and
// types, and records indices and types.
func (c *compiled) resolveColumns(schema *arrow.Schema, r Rule) error {
	switch {
	case r.Kind != Hash && r.Kind != Range && r.Kind != Column:
		return fmt.Errorf("%w: unknown kind %q (want %q, %q or %q)", ErrBadRule, r.Kind, Hash, Range, Column)
	case len(r.Columns) == 0:
		return fmt.Errorf("%w: %s rule names no column", ErrBadRule, r.Kind)
	case r.Kind != Hash && len(r.Columns) != 1:
		return fmt.Errorf("%w: %s rule needs exactly one column, got %d", ErrBadRule, r.Kind, len(r.Columns))
	}
	seen := make(map[string]bool, len(r.Columns))
	for _, name := range r.Columns {
		if seen[name] {
			return fmt.Errorf("%w: column %q listed twice", ErrBadRule, name)
		}
		seen[name] = true
		idx := schema.FieldIndices(name)
		if len(idx) != 1 {
			return fmt.Errorf("%w: column %q: %d columns of that name in schema %v", ErrBadRule, name, len(idx), fieldNames(schema))
		}
		ct, err := checkField(schema.Field(idx[0]))
		if err != nil {
			return err
		}
		c.cols = append(c.cols, idx[0])
		c.types = append(c.types, ct)
	}
	return nil
}

// checkKind applies the checks specific to the rule kind.
func (c *compiled) checkKind(schema *arrow.Schema, r Rule) error {
	f := schema.Field(c.cols[0])
	if r.Kind != Range && len(r.Divisions) != 0 {
		return fmt.Errorf("%w: %s rule on column %q must not have divisions", ErrBadRule, r.Kind, f.Name)
	}
	switch r.Kind {
	case Column:
		if cl := c.types[0].class; cl != classSigned && cl != classUnsigned || isTemporal(f.Type) {
			return fmt.Errorf("%w: partition column %q has type %s, want an integer type", ErrUnsupportedType, f.Name, f.Type)
		}
	case Range:
		return c.parseDivisions(f, r.Divisions)
	}
	return nil
}

// isTemporal reports whether dt is a date or timestamp type.
func isTemporal(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.DATE32, arrow.DATE64, arrow.TIMESTAMP:
		return true
	}
	return false
}

// fieldNames lists the column names of schema for error messages.
func fieldNames(schema *arrow.Schema) []string {
	names := make([]string, schema.NumFields())
	for i, f := range schema.Fields() {
		names[i] = f.Name
	}
	return names
}
