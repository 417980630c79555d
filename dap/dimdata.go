package dap

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Version is the protocol version Local values are written with.
const Version = "0.10.0"

// DimDict is one dimension dictionary. Optional keys are pointers (or
// empty) when absent.
type DimDict struct {
	DistType     string    `json:"dist_type"`
	Size         int64     `json:"size"`
	ProcGridSize int       `json:"proc_grid_size"`
	ProcGridRank int       `json:"proc_grid_rank"`
	Start        *int64    `json:"start,omitempty"`
	Stop         *int64    `json:"stop,omitempty"`
	Padding      *[2]int64 `json:"padding,omitempty"`
	Periodic     bool      `json:"periodic,omitempty"`
	BlockSize    *int64    `json:"block_size,omitempty"`
	Indices      []int64   `json:"indices,omitempty"`
	OneToOne     *bool     `json:"one_to_one,omitempty"`
}

// MarshalJSON writes the dictionary; indices is written for dist_type
// "u" even when empty, since the key is required.
func (d DimDict) MarshalJSON() ([]byte, error) {
	type plain DimDict
	if d.DistType != "u" {
		return json.Marshal(plain(d))
	}
	idx := d.Indices
	if idx == nil {
		idx = []int64{}
	}
	return json.Marshal(struct {
		plain
		Indices []int64 `json:"indices"`
	}{plain(d), idx})
}

// Local is one process's description of its local array.
type Local struct {
	Version string    `json:"__version__"`
	DimData []DimDict `json:"dim_data"`
}

// keysOf returns the keys dist_type dt allows, the required ones first,
// nreq of them; nil for an unknown dist_type.
func keysOf(dt string) (names []string, nreq int) {
	common := []string{"dist_type", "size", "proc_grid_size", "proc_grid_rank"}
	switch dt {
	case "b":
		return append(common, "start", "stop", "padding", "periodic"), 6
	case "c":
		return append(common, "start", "block_size"), 5
	case "u":
		return append(common, "indices", "one_to_one"), 5
	}
	return nil, 0
}

// Decode parses process proc's JSON description of its local array of the
// given buffer shape and checks each dimension dictionary on its own. An
// empty dictionary is the protocol's alias of an undistributed axis. The
// error wraps ErrDecode, ErrVersion, ErrMissingKey, ErrUnknownKey,
// ErrBadValue, ErrDuplicate or ErrSize.
func Decode(b []byte, proc int, shape []int64) (Local, error) {
	var raw struct {
		Version *string                      `json:"__version__"`
		DimData []map[string]json.RawMessage `json:"dim_data"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return Local{}, fmt.Errorf("process %d: %v: %w", proc, err, ErrDecode)
	}
	if raw.Version == nil {
		return Local{}, keyErr(proc, -1, "__version__", ErrMissingKey, "absent")
	}
	l := Local{Version: *raw.Version, DimData: make([]DimDict, len(raw.DimData))}
	for a, m := range raw.DimData {
		var err error
		if l.DimData[a], err = decodeDict(m, proc, a, shape); err != nil {
			return Local{}, err
		}
	}
	return l, l.Check(proc, shape)
}

// decodeDict decodes one dimension dictionary, checking its keys.
func decodeDict(m map[string]json.RawMessage, proc, axis int, shape []int64) (DimDict, error) {
	if len(m) == 0 {
		return undistributed(axis, shape), nil
	}
	var dt string
	err := json.Unmarshal(m["dist_type"], &dt)
	if names, _ := keysOf(dt); err != nil || names == nil {
		return DimDict{}, keyErr(proc, axis, "dist_type", ErrBadValue, "%s is not \"b\", \"c\" or \"u\"", m["dist_type"])
	}
	if err := checkKeys(m, dt, proc, axis); err != nil {
		return DimDict{}, err
	}
	var d DimDict
	for k, v := range m {
		one := map[string]json.RawMessage{k: v}
		b, _ := json.Marshal(one)
		dec := json.NewDecoder(bytes.NewReader(b))
		if err := dec.Decode(&d); err != nil {
			return DimDict{}, keyErr(proc, axis, k, ErrBadValue, "%s: %v", v, err)
		}
	}
	return d, nil
}

// checkKeys checks that m has the keys dist_type dt requires and no others.
func checkKeys(m map[string]json.RawMessage, dt string, proc, axis int) error {
	names, nreq := keysOf(dt)
	for _, k := range names[:nreq] {
		if _, ok := m[k]; !ok {
			return keyErr(proc, axis, k, ErrMissingKey, "dist_type %q requires it", dt)
		}
	}
	for k := range m {
		if !contains(names, k) {
			return keyErr(proc, axis, k, ErrUnknownKey, "not a key of dist_type %q", dt)
		}
	}
	return nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// undistributed is the protocol's meaning of an empty dictionary.
func undistributed(axis int, shape []int64) DimDict {
	n := int64(0)
	if axis < len(shape) {
		n = shape[axis]
	}
	zero := int64(0)
	return DimDict{DistType: "b", Size: n, ProcGridSize: 1, Start: &zero, Stop: &n}
}

// Check checks process proc's description against its buffer shape, each
// dictionary on its own. Decode calls it.
func (l Local) Check(proc int, shape []int64) error {
	if err := checkVersion(l.Version); err != nil {
		return fmt.Errorf("process %d, key \"__version__\": %q: %w", proc, l.Version, err)
	}
	if len(l.DimData) != len(shape) {
		return keyErr(proc, -1, "dim_data", ErrSize, "%d dictionaries for a buffer of shape %v", len(l.DimData), shape)
	}
	for a, d := range l.DimData {
		if err := d.check(proc, a, shape[a]); err != nil {
			return err
		}
	}
	return nil
}

// checkVersion accepts major.minor.patch with major 0 or 1.
func checkVersion(v string) error {
	parts := strings.Split(v, ".")
	if len(parts) != 3 || (parts[0] != "0" && parts[0] != "1") {
		return ErrVersion
	}
	for _, p := range parts {
		if _, err := strconv.ParseUint(p, 10, 32); err != nil {
			return ErrVersion
		}
	}
	return nil
}

// check checks one dictionary against the buffer's length n on its axis.
func (d DimDict) check(proc, axis int, n int64) error {
	switch {
	case d.Size < 0:
		return keyErr(proc, axis, "size", ErrBadValue, "%d < 0", d.Size)
	case d.ProcGridSize < 1:
		return keyErr(proc, axis, "proc_grid_size", ErrBadValue, "%d < 1", d.ProcGridSize)
	case d.ProcGridRank < 0 || d.ProcGridRank >= d.ProcGridSize:
		return keyErr(proc, axis, "proc_grid_rank", ErrBadValue, "%d not in 0..%d", d.ProcGridRank, d.ProcGridSize-1)
	}
	switch d.DistType {
	case "b":
		return d.checkBlock(proc, axis, n)
	case "c":
		return d.checkCyclic(proc, axis, n)
	case "u":
		return d.checkUnstructured(proc, axis, n)
	}
	return keyErr(proc, axis, "dist_type", ErrBadValue, "%q", d.DistType)
}
