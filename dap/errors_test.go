package dap

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// proc is one process's JSON and buffer shape.
type proc struct {
	json  string
	shape []int64
}

// decodeAll decodes every process and checks the set.
func decodeAll(ps []proc) error {
	ls := make([]Local, len(ps))
	for p, pr := range ps {
		var err error
		if ls[p], err = Decode([]byte(pr.json), p, pr.shape); err != nil {
			return err
		}
	}
	_, err := FromLocals(ls)
	return err
}

// b1 is a one-axis block description on a grid of 2.
func b1(rank, size, start, stop int, extra string) string {
	return bn(2, rank, size, start, stop, extra)
}

// bn is a one-axis block description on a grid of procs.
func bn(procs, rank, size, start, stop int, extra string) string {
	return fmt.Sprintf(`{"__version__": "0.10.0", "dim_data": [{"dist_type": "b", "size": %d, "proc_grid_size": %d, "proc_grid_rank": %d, "start": %d, "stop": %d%s}]}`,
		size, procs, rank, start, stop, extra)
}

// TestBadDimData checks that each bad description is refused with its
// sentinel, naming the process, the axis and the key.
func TestBadDimData(t *testing.T) {
	ok0 := proc{b1(0, 10, 0, 5, ""), []int64{5}}
	tests := []struct {
		name  string
		procs []proc
		want  error
		names string // process N, axis A, key "K"
	}{
		{"not JSON", []proc{{`{`, []int64{1}}}, ErrDecode, "process 0"},
		{"no version", []proc{{`{"dim_data": []}`, nil}}, ErrMissingKey, `key "__version__"`},
		{"bad version", []proc{{`{"__version__": "2.0", "dim_data": []}`, nil}}, ErrVersion, `process 0, key "__version__"`},
		{"bad dist_type", []proc{{`{"__version__": "0.10.0", "dim_data": [{"dist_type": "x"}]}`, []int64{1}}}, ErrBadValue, `process 0, axis 0, key "dist_type"`},
		{"missing stop", []proc{{`{"__version__": "0.10.0", "dim_data": [{"dist_type": "b", "size": 4, "proc_grid_size": 1, "proc_grid_rank": 0, "start": 0}]}`, []int64{4}}}, ErrMissingKey, `process 0, axis 0, key "stop"`},
		{"unknown key", []proc{{`{"__version__": "0.10.0", "dim_data": [{"dist_type": "c", "size": 4, "proc_grid_size": 1, "proc_grid_rank": 0, "start": 0, "stop": 4}]}`, []int64{4}}}, ErrUnknownKey, `key "stop"`},
		{"wrong type", []proc{{`{"__version__": "0.10.0", "dim_data": [{"dist_type": "b", "size": "4", "proc_grid_size": 1, "proc_grid_rank": 0, "start": 0, "stop": 4}]}`, []int64{4}}}, ErrBadValue, `key "size"`},
		{"rank out of grid", []proc{{b1(2, 10, 0, 5, ""), []int64{5}}}, ErrBadValue, `key "proc_grid_rank"`},
		{"buffer size", []proc{{b1(0, 10, 0, 5, ""), []int64{4}}}, ErrSize, `process 0, axis 0, key "stop"`},
		{"grid product", []proc{ok0}, ErrGrid, `key "proc_grid_size"`},
		{"grid rank order", []proc{{b1(1, 10, 5, 10, ""), []int64{5}}, {b1(0, 10, 0, 5, ""), []int64{5}}}, ErrGrid, `process 0, axis 0, key "proc_grid_rank"`},
		{"overlap", []proc{ok0, {b1(1, 10, 4, 10, ""), []int64{6}}}, ErrOverlap, `process 1, axis 0, key "start"`},
		{"missing", []proc{ok0, {b1(1, 10, 6, 10, ""), []int64{4}}}, ErrMissing, `process 1, axis 0, key "start"`},
		{"sizes do not add up", []proc{ok0, {b1(1, 10, 5, 9, ""), []int64{4}}}, ErrSize, `process 1, axis 0, key "stop"`},
		{"size disagrees", []proc{ok0, {b1(1, 11, 5, 10, ""), []int64{5}}}, ErrInconsistent, `process 1, axis 0, key "size"`},
		{"padding wider than neighbour", []proc{{bn(3, 0, 10, 0, 4, `, "padding": [0, 2]`), []int64{4}}, {bn(3, 1, 10, 0, 5, `, "padding": [2, 2]`), []int64{5}},
			{bn(3, 2, 10, 1, 10, `, "padding": [2, 0]`), []int64{9}}}, ErrPadding, `process 0, axis 0, key "padding"`},
		{"padding mismatch", []proc{{b1(0, 10, 0, 6, `, "padding": [0, 1]`), []int64{6}}, {b1(1, 10, 3, 10, `, "padding": [2, 0]`), []int64{7}}}, ErrPadding, `process 0, axis 0, key "padding"`},
		{"periodic on one rank only", []proc{{b1(0, 10, 0, 5, `, "periodic": true`), []int64{5}}, {b1(1, 10, 5, 10, ""), []int64{5}}}, ErrInconsistent, `process 1, axis 0, key "periodic"`},
		{"periodic ghosts longer than the period", []proc{{bn(1, 0, 4, 0, 4, `, "padding": [2, 1], "periodic": true`), []int64{4}}}, ErrPadding, `process 0, axis 0, key "padding"`},
		{"padding past buffer", []proc{{b1(0, 10, 0, 2, `, "padding": [0, 3]`), []int64{2}}}, ErrPadding, `key "padding"`},
		{"cyclic start", []proc{{`{"__version__": "0.10.0", "dim_data": [{"dist_type": "c", "size": 4, "proc_grid_size": 2, "proc_grid_rank": 1, "start": 0}]}`, []int64{2}}}, ErrBadValue, `key "start"`},
		{"cyclic share", []proc{{`{"__version__": "0.10.0", "dim_data": [{"dist_type": "c", "size": 5, "proc_grid_size": 2, "proc_grid_rank": 0, "start": 0, "block_size": 2}]}`, []int64{2}}}, ErrSize, `key "size"`},
		{"non-unique indices", []proc{{`{"__version__": "0.10.0", "dim_data": [{"dist_type": "u", "size": 4, "proc_grid_size": 1, "proc_grid_rank": 0, "indices": [0, 1, 1, 3]}]}`, []int64{4}}}, ErrDuplicate, `process 0, axis 0, key "indices"`},
		{"indices owned twice", []proc{
			{`{"__version__": "0.10.0", "dim_data": [{"dist_type": "u", "size": 3, "proc_grid_size": 2, "proc_grid_rank": 0, "indices": [2, 0]}]}`, []int64{2}},
			{`{"__version__": "0.10.0", "dim_data": [{"dist_type": "u", "size": 3, "proc_grid_size": 2, "proc_grid_rank": 1, "indices": [0]}]}`, []int64{1}}}, ErrOverlap, `process 1, axis 0, key "indices"`},
		{"indices owned by none: sizes do not add up", []proc{
			{`{"__version__": "0.10.0", "dim_data": [{"dist_type": "u", "size": 3, "proc_grid_size": 2, "proc_grid_rank": 0, "indices": [2]}]}`, []int64{1}},
			{`{"__version__": "0.10.0", "dim_data": [{"dist_type": "u", "size": 3, "proc_grid_size": 2, "proc_grid_rank": 1, "indices": [0]}]}`, []int64{1}}}, ErrSize, `process 0, axis 0, key "size"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := decodeAll(tc.procs)
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), tc.names) {
				t.Fatalf("%q does not name %s", err, tc.names)
			}
		})
	}
}

// TestEmptyDictAlias checks the protocol's empty dictionary.
func TestEmptyDictAlias(t *testing.T) {
	l, err := Decode([]byte(`{"__version__": "0.10.0", "dim_data": [{}]}`), 0, []int64{7})
	if err != nil {
		t.Fatal(err)
	}
	d, err := FromLocals([]Local{l})
	if err != nil || d.Shape[0] != 7 || d.Dists[0] != nil {
		t.Fatalf("%+v, %v", d, err)
	}
}
