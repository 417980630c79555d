package zarr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/shufflenode/shufflenode/rechunk"
)

// maxMetaBytes bounds the size of a .zarray document Open reads.
const maxMetaBytes = 1 << 20

// zarrayIn is a .zarray document as read: pointers and raw values tell
// absent keys from null ones.
type zarrayIn struct {
	ZarrFormat         *int            `json:"zarr_format"`
	Shape              *[]int64        `json:"shape"`
	Chunks             *[]int64        `json:"chunks"`
	DType              json.RawMessage `json:"dtype"`
	Compressor         json.RawMessage `json:"compressor"`
	FillValue          json.RawMessage `json:"fill_value"`
	Order              *string         `json:"order"`
	Filters            json.RawMessage `json:"filters"`
	DimensionSeparator *string         `json:"dimension_separator"`
}

// zarrayOut is a .zarray document as written, keys sorted as zarr-python
// writes them.
type zarrayOut struct {
	Chunks             []int64         `json:"chunks"`
	Compressor         *compressorJSON `json:"compressor"`
	DimensionSeparator string          `json:"dimension_separator"`
	DType              string          `json:"dtype"`
	FillValue          json.RawMessage `json:"fill_value"`
	Filters            *struct{}       `json:"filters"`
	Order              string          `json:"order"`
	Shape              []int64         `json:"shape"`
	ZarrFormat         int             `json:"zarr_format"`
}

// compressorJSON is a numcodecs compressor config.
type compressorJSON struct {
	ID    string `json:"id"`
	Level int    `json:"level"`
}

// decodeMeta parses and validates a .zarray document.
func decodeMeta(data []byte) (Meta, error) {
	var in zarrayIn
	if err := json.Unmarshal(data, &in); err != nil {
		return Meta{}, fmt.Errorf("%w: %w", ErrMeta, err)
	}
	if err := in.checkLayout(); err != nil {
		return Meta{}, err
	}
	dt, err := decodeDType(in.DType)
	if err != nil {
		return Meta{}, err
	}
	comp, err := decodeCompressor(in.Compressor)
	if err != nil {
		return Meta{}, err
	}
	m := Meta{Shape: *in.Shape, Chunks: *in.Chunks, DType: dt, Compressor: comp,
		FillValue: in.FillValue, Separator: SeparatorDot}
	if in.DimensionSeparator != nil {
		m.Separator = *in.DimensionSeparator
	}
	m = m.normalized()
	return m, m.Validate()
}

// checkLayout checks zarr_format, the presence of shape and chunks, order
// and filters.
func (in *zarrayIn) checkLayout() error {
	if in.ZarrFormat == nil || *in.ZarrFormat != 2 {
		return fmt.Errorf("zarr_format must be 2: %w", ErrMeta)
	}
	if in.Shape == nil || in.Chunks == nil {
		return fmt.Errorf("shape and chunks are required: %w", ErrMeta)
	}
	if in.DimensionSeparator != nil && *in.DimensionSeparator == "" {
		return fmt.Errorf("empty dimension_separator: %w", ErrMeta)
	}
	if in.Order != nil && *in.Order != "C" {
		return fmt.Errorf("order %q (only \"C\" is supported): %w", *in.Order, ErrOrder)
	}
	return checkFilters(in.Filters)
}

// checkFilters accepts an absent, null or empty filters list and refuses
// any other, naming the filters' ids.
func checkFilters(raw json.RawMessage) error {
	if isNull(raw) {
		return nil
	}
	var list []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return fmt.Errorf("filters %s: %w", raw, ErrFilters)
	}
	if len(list) == 0 {
		return nil
	}
	ids := make([]string, len(list))
	for i, f := range list {
		ids[i] = f.ID
	}
	return fmt.Errorf("filters %q (only null is supported): %w", ids, ErrFilters)
}

// decodeDType parses a dtype string. One-byte types with '<' or '>' byte
// order are read as '|'; structured (list) dtypes are refused.
func decodeDType(raw json.RawMessage) (rechunk.DType, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return rechunk.DType{}, fmt.Errorf("dtype %s (only simple numeric dtypes are supported): %w", raw, ErrDType)
	}
	if len(s) == 3 && (s[0] == '<' || s[0] == '>') && s[2] == '1' {
		s = "|" + s[1:]
	}
	dt, err := rechunk.ParseDType(s)
	if err != nil {
		return rechunk.DType{}, fmt.Errorf("dtype %q: %w: %w", s, ErrDType, err)
	}
	return dt, nil
}

// decodeCompressor parses a numcodecs compressor config; null means none.
// Keys other than id and level (zstd's checksum, say) are ignored.
func decodeCompressor(raw json.RawMessage) (*Compressor, error) {
	if isNull(raw) {
		return nil, nil
	}
	var c struct {
		ID    *string `json:"id"`
		Level *int    `json:"level"`
	}
	if err := json.Unmarshal(raw, &c); err != nil || c.ID == nil {
		return nil, fmt.Errorf("compressor %s: %w", raw, ErrCompressor)
	}
	out := &Compressor{ID: *c.ID, Level: 1}
	if c.Level != nil {
		out.Level = *c.Level
	}
	return out, out.validate()
}

// isNull reports whether raw is absent or JSON null.
func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || string(t) == "null"
}

// encodeMeta returns the .zarray document of a normalized, valid m.
func encodeMeta(m Meta) ([]byte, error) {
	out := zarrayOut{
		Chunks:             nonNil(m.Chunks),
		DimensionSeparator: m.Separator,
		DType:              m.DType.String(),
		FillValue:          m.FillValue,
		Order:              "C",
		Shape:              nonNil(m.Shape),
		ZarrFormat:         2,
	}
	if m.Compressor != nil {
		out.Compressor = &compressorJSON{ID: m.Compressor.ID, Level: m.Compressor.Level}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // "<f8", not "\u003cf8"
	enc.SetIndent("", strings.Repeat(" ", 4))
	if err := enc.Encode(out); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMeta, err)
	}
	return b.Bytes(), nil
}
