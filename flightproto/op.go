package flightproto

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/shufflenode/shufflenode/dfops"
	"github.com/shufflenode/shufflenode/spec"
)

// Validate checks an op ticket on its own (the shuffles, partition range
// and columns are checked against the node's shuffles when it runs).
func (op OpTicket) Validate() error {
	want := map[string]int{OpJoin: 2, OpSort: 1, OpCopy: 1}[op.Op]
	switch {
	case want == 0:
		return fmt.Errorf("op ticket: op %q, want %q, %q or %q", op.Op, OpJoin, OpSort, OpCopy)
	case len(op.Shuffles) != want:
		return fmt.Errorf("op ticket: %s takes %d shuffles, got %d", op.Op, want, len(op.Shuffles))
	case op.Partition < 0:
		return fmt.Errorf("op ticket: partition %d < 0", op.Partition)
	}
	for _, id := range op.Shuffles {
		if err := spec.ValidateID(id); err != nil {
			return fmt.Errorf("op ticket: %w", err)
		}
	}
	if op.Write != nil {
		if err := op.Write.Validate(); err != nil {
			return fmt.Errorf("op ticket: %w", err)
		}
	}
	switch op.Op {
	case OpJoin:
		return op.validateJoin()
	case OpSort:
		return op.validateSort()
	}
	if op.Column != "" || op.Join != nil || op.Write == nil {
		return errors.New("op ticket: copy needs \"write\" (a partition ticket streams a partition), and takes no \"column\" and no \"join\"")
	}
	return nil
}

// Validate checks the shape of a write's path: absolute, clean, a
// ".parquet" file name that is not hidden. Whether the node may write there
// is the node's to decide (its output roots).
func (w WriteSpec) Validate() error {
	name := filepath.Base(w.Path)
	switch {
	case !filepath.IsAbs(w.Path):
		return fmt.Errorf("write: path %q is not absolute", w.Path)
	case filepath.Clean(w.Path) != w.Path:
		return fmt.Errorf("write: path %q is not clean (want %q)", w.Path, filepath.Clean(w.Path))
	case !strings.HasSuffix(name, ".parquet") || strings.HasPrefix(name, "."):
		return fmt.Errorf("write: path %q: want a file name ending in .parquet, not starting with a dot", w.Path)
	}
	return nil
}

func (op OpTicket) validateJoin() error {
	if op.Join == nil || op.Column != "" {
		return errors.New("op ticket: join needs \"join\" and no \"column\"")
	}
	if _, err := op.Join.DFOps(); err != nil {
		return fmt.Errorf("op ticket: join: %w", err)
	}
	return nil
}

func (op OpTicket) validateSort() error {
	if op.Column == "" || op.Join != nil {
		return errors.New("op ticket: sort needs \"column\" and no \"join\"")
	}
	return nil
}

// DFOps returns the join as a dfops.JoinSpec, checked (errors wrap
// dfops.ErrSpec).
func (j JoinSpec) DFOps() (dfops.JoinSpec, error) {
	d := dfops.JoinSpec{LeftOn: j.LeftOn, RightOn: j.RightOn, How: dfops.How(j.How)}
	switch len(j.Suffixes) {
	case 0:
	case 2:
		d.Suffixes = [2]string{j.Suffixes[0], j.Suffixes[1]}
	default:
		return d, fmt.Errorf("%w: %d suffixes, want 2 (left, right)", dfops.ErrSpec, len(j.Suffixes))
	}
	return d, d.Validate()
}

// JoinSpecOf is the JSON form of a dfops.JoinSpec.
func JoinSpecOf(j dfops.JoinSpec) JoinSpec {
	out := JoinSpec{LeftOn: j.LeftOn, RightOn: j.RightOn, How: string(j.How)}
	if j.Suffixes != [2]string{} {
		out.Suffixes = []string{j.Suffixes[0], j.Suffixes[1]}
	}
	return out
}
