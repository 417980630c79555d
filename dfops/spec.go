package dfops

import (
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
)

// How is the kind of a join, as pandas.merge names them.
type How string

// The four joins.
const (
	// Inner keeps the pairs of rows whose keys match.
	Inner How = "inner"
	// Left keeps every left row: its matches, or one row with nulls on the
	// right.
	Left How = "left"
	// Right keeps every right row: its matches, or one row with nulls on the
	// left.
	Right How = "right"
	// Outer keeps the matches, every unmatched left row and every unmatched
	// right row.
	Outer How = "outer"
)

// DefaultSuffixes are pandas' suffixes for clashing column names.
var DefaultSuffixes = [2]string{"_x", "_y"}

// JoinSpec says how two records are joined. Its zero value is not valid:
// LeftOn and RightOn need at least one column.
type JoinSpec struct {
	// LeftOn and RightOn name the key columns, pairwise: LeftOn[i] is
	// compared with RightOn[i]. A pair with the same name is pandas' "on".
	LeftOn, RightOn []string
	// How is Inner (the default when empty), Left, Right or Outer.
	How How
	// Suffixes are appended to the left and the right name of every non-key
	// column found on both sides; the zero value means DefaultSuffixes.
	Suffixes [2]string
}

// DefaultJoinSpec returns an inner join on the given key columns, present
// under the same names on both sides, with the default suffixes.
func DefaultJoinSpec(on ...string) JoinSpec {
	return JoinSpec{LeftOn: on, RightOn: on, How: Inner, Suffixes: DefaultSuffixes}
}

// withDefaults fills in How and Suffixes.
func (j JoinSpec) withDefaults() JoinSpec {
	if j.How == "" {
		j.How = Inner
	}
	if j.Suffixes == [2]string{} {
		j.Suffixes = DefaultSuffixes
	}
	return j
}

// Validate checks the spec on its own (see JoinSchema for the checks against
// the two schemas).
func (j JoinSpec) Validate() error {
	j = j.withDefaults()
	switch {
	case !slices.Contains([]How{Inner, Left, Right, Outer}, j.How):
		return fmt.Errorf("%w: how %q: want inner, left, right or outer", ErrSpec, j.How)
	case len(j.LeftOn) == 0 || len(j.RightOn) == 0:
		return fmt.Errorf("%w: no key columns", ErrSpec)
	case len(j.LeftOn) != len(j.RightOn):
		return fmt.Errorf("%w: %d left keys %v but %d right keys %v", ErrSpec, len(j.LeftOn), j.LeftOn, len(j.RightOn), j.RightOn)
	}
	if err := uniqueNames("left", j.LeftOn); err != nil {
		return err
	}
	return uniqueNames("right", j.RightOn)
}

func uniqueNames(side string, names []string) error {
	for i, n := range names {
		if slices.Contains(names[:i], n) {
			return fmt.Errorf("%w: %s key column %q named twice", ErrSpec, side, n)
		}
	}
	return nil
}

// source is where one output column comes from: column col of side (0 left,
// 1 right), or, when key >= 0, the key pair key merged into one column.
type source struct {
	side, col, key int
}

// layout is a join's output: its schema, where each column comes from, and
// the key columns with their common types.
type layout struct {
	spec       JoinSpec
	schema     *arrow.Schema
	srcs       []source
	keyTypes   []arrow.DataType
	keyCols    [2][]int // column index of each key, per side
	mergedKeys map[int]int
}

// JoinSchema returns the schema of the join of records with schemas left
// and right: the left columns, then the right columns without the keys that
// share their left key's name; clashing names get the suffixes; merged keys
// have their common type (CommonKeyType). Errors wrap ErrSpec, ErrColumn or
// ErrKeyType and name the columns concerned.
func JoinSchema(left, right *arrow.Schema, j JoinSpec) (*arrow.Schema, error) {
	lay, err := newLayout(left, right, j)
	if err != nil {
		return nil, err
	}
	return lay.schema, nil
}

// KeyTypes returns the common type of each key pair of j (CommonKeyType), or
// an error wrapping ErrKeyType naming both columns and their types.
func KeyTypes(left, right *arrow.Schema, j JoinSpec) ([]arrow.DataType, error) {
	lay, err := newLayout(left, right, j)
	if err != nil {
		return nil, err
	}
	return lay.keyTypes, nil
}

func newLayout(left, right *arrow.Schema, j JoinSpec) (*layout, error) {
	if err := j.Validate(); err != nil {
		return nil, err
	}
	lay := &layout{spec: j.withDefaults(), mergedKeys: map[int]int{}}
	if err := lay.resolveKeys(left, right); err != nil {
		return nil, err
	}
	return lay, lay.buildSchema(left, right)
}

// resolveKeys finds the key columns and their common types.
func (lay *layout) resolveKeys(left, right *arrow.Schema) error {
	for i := range lay.spec.LeftOn {
		li, err := columnIndex(left, "left", lay.spec.LeftOn[i])
		if err != nil {
			return err
		}
		ri, err := columnIndex(right, "right", lay.spec.RightOn[i])
		if err != nil {
			return err
		}
		lt, rt := left.Field(li).Type, right.Field(ri).Type
		t, err := CommonKeyType(lt, rt)
		if err != nil {
			return fmt.Errorf("left key %q (%s) and right key %q (%s): %w", lay.spec.LeftOn[i], lt, lay.spec.RightOn[i], rt, err)
		}
		lay.keyCols[0], lay.keyCols[1] = append(lay.keyCols[0], li), append(lay.keyCols[1], ri)
		lay.keyTypes = append(lay.keyTypes, t)
	}
	return nil
}

// columnIndex finds the one column of schema named name.
func columnIndex(schema *arrow.Schema, side, name string) (int, error) {
	idx := schema.FieldIndices(name)
	switch len(idx) {
	case 0:
		return 0, fmt.Errorf("%w: %s has no column %q (columns: %v)", ErrColumn, side, name, fieldNames(schema))
	case 1:
		return idx[0], nil
	}
	return 0, fmt.Errorf("%w: %s has %d columns named %q", ErrColumn, side, len(idx), name)
}

func fieldNames(schema *arrow.Schema) []string {
	names := make([]string, schema.NumFields())
	for i, f := range schema.Fields() {
		names[i] = f.Name
	}
	return names
}

// buildSchema lays out the output columns.
func (lay *layout) buildSchema(left, right *arrow.Schema) error {
	mergedRight := map[int]bool{}
	for k := range lay.keyTypes {
		if lay.spec.LeftOn[k] == lay.spec.RightOn[k] {
			lay.mergedKeys[lay.keyCols[0][k]] = k
			mergedRight[lay.keyCols[1][k]] = true
		}
	}
	rightNames := map[string]bool{}
	for i, f := range right.Fields() {
		if !mergedRight[i] {
			rightNames[f.Name] = true
		}
	}
	fields := lay.leftFields(left, right, rightNames)
	for i, f := range right.Fields() {
		if mergedRight[i] {
			continue
		}
		if left.HasField(f.Name) {
			f.Name += lay.spec.Suffixes[1]
		}
		f.Nullable = f.Nullable || lay.spec.How == Left || lay.spec.How == Outer
		fields = append(fields, f)
		lay.srcs = append(lay.srcs, source{side: 1, col: i, key: -1})
	}
	lay.schema = arrow.NewSchema(fields, nil)
	return uniqueOutput(fields)
}

// leftFields lays out the left columns (merged keys included).
func (lay *layout) leftFields(left, right *arrow.Schema, rightNames map[string]bool) []arrow.Field {
	var fields []arrow.Field
	for i, f := range left.Fields() {
		if k, ok := lay.mergedKeys[i]; ok {
			rf := right.Field(lay.keyCols[1][k])
			f.Type, f.Nullable = lay.keyTypes[k], f.Nullable || rf.Nullable
			fields = append(fields, f)
			lay.srcs = append(lay.srcs, source{side: 0, col: i, key: k})
			continue
		}
		if rightNames[f.Name] {
			f.Name += lay.spec.Suffixes[0]
		}
		f.Nullable = f.Nullable || lay.spec.How == Right || lay.spec.How == Outer
		fields = append(fields, f)
		lay.srcs = append(lay.srcs, source{side: 0, col: i, key: -1})
	}
	return fields
}

func uniqueOutput(fields []arrow.Field) error {
	seen := map[string]bool{}
	for _, f := range fields {
		if seen[f.Name] {
			return fmt.Errorf("%w: the output would have two columns named %q (change the suffixes or rename a column)", ErrColumn, f.Name)
		}
		seen[f.Name] = true
	}
	return nil
}
