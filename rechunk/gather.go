package rechunk

import (
	"fmt"
	"slices"

	"github.com/shufflenode/shufflenode/splitaxes"
)

// A piece along a run axis (splitaxes.NewRunAxis) is gathered: its
// stretches (splitaxes.Seg) sit one after another in the piece but apart in
// the old and in the new chunk. The sender gathers them with AppendGathered;
// the Assembler scatters them. Along the other axes a piece is one stretch,
// so a plan without run axes copies exactly as before.

// span is one stretch along one axis: n elements from position src to
// position dst.
type span struct{ src, dst, n int64 }

// AppendGathered is AppendPiece for an ndsplit that may have gathered axes
// (segs is splitaxes.NDSplit.Segs; nil means none): along those axes the
// piece holds its segments one after another.
func AppendGathered(dst []byte, src Chunk, ranges []splitaxes.Slice, segs [][]splitaxes.Seg) ([]byte, error) {
	if segs == nil {
		return AppendPiece(dst, src, ranges)
	}
	if err := src.Validate(); err != nil {
		return dst, err
	}
	_, shape, err := resolve(gatherBounds(src.Shape, segs), ranges)
	if err != nil {
		return dst, err
	}
	spans, err := gatherSpans(ranges, segs, src.Shape)
	if err != nil {
		return dst, err
	}
	n, _ := NumBytes(src.DType, shape)
	dst = appendShape(dst, shape)
	head := len(dst)
	dst = append(dst, make([]byte, n)...)
	copySpans(box{data: dst[head:], shape: shape}, box{data: src.Data, shape: src.Shape}, spans, src.DType.ItemSize())
	return dst, nil
}

// gatherBounds returns the bound of each axis of a piece gathered from a
// chunk of shape: the chunk's length, or on a gathered axis the segments'
// total if longer (a periodic axis's piece may hold an element twice: as
// data and as a ghost copy). gatherSpans checks the segments themselves.
func gatherBounds(shape []int64, segs [][]splitaxes.Seg) []int64 {
	out := slices.Clone(shape)
	for d, ss := range segs {
		n := int64(0)
		for _, s := range ss {
			n += s.Len
		}
		if d < len(out) {
			out[d] = max(out[d], n)
		}
	}
	return out
}

// gatherSpans returns, per axis, the spans from the old chunk (of shape) to
// the piece, checking the segments' bounds.
func gatherSpans(ranges []splitaxes.Slice, segs [][]splitaxes.Seg, shape []int64) ([][]span, error) {
	out := make([][]span, len(ranges))
	for d, r := range ranges {
		if d >= len(segs) || segs[d] == nil {
			out[d] = []span{{src: r.Start, n: sliceLen(r, shape[d])}}
			continue
		}
		pos := int64(0)
		for _, s := range segs[d] {
			if s.Old < 0 || s.Len < 0 || s.Old+s.Len > shape[d] {
				return nil, fmt.Errorf("segment %+v of axis %d of shape %v: %w", s, d, shape, ErrSlice)
			}
			out[d] = append(out[d], span{src: s.Old, dst: pos, n: s.Len})
			pos += s.Len
		}
		if pos != sliceLen(r, shape[d]) {
			return nil, fmt.Errorf("segments of axis %d hold %d elements, the slice %v: %w", d, pos, r, ErrSlice)
		}
	}
	return out, nil
}

// scatterSpans returns, per axis, the spans from a piece to the new chunk:
// segs where gathered, else one span at the piece's offset.
func scatterSpans(lens, offs []int64, segs [][]splitaxes.Seg) [][]span {
	out := make([][]span, len(lens))
	for d := range lens {
		if segs[d] == nil {
			out[d] = []span{{dst: offs[d], n: lens[d]}}
			continue
		}
		pos := int64(0)
		for _, s := range segs[d] {
			out[d] = append(out[d], span{src: pos, dst: s.New, n: s.Len})
			pos += s.Len
		}
	}
	return out
}

func sliceLen(r splitaxes.Slice, size int64) int64 {
	if r.OpenEnded() {
		return size - r.Start
	}
	return r.Stop - r.Start
}

// flip swaps the direction of spans.
func flip(spans [][]span) [][]span {
	out := make([][]span, len(spans))
	for d, ss := range spans {
		for _, s := range ss {
			out[d] = append(out[d], span{src: s.dst, dst: s.src, n: s.n})
		}
	}
	return out
}

// copySpans copies, for every combination of one span per axis, the box
// those spans give from src to dst (only data and shape of the boxes are
// used): an odometer over the combinations, one copyBox each.
func copySpans(dst, src box, spans [][]span, item int) {
	nd := len(spans)
	q := make([]int, nd)
	so, do, count := make([]int64, nd), make([]int64, nd), make([]int64, nd)
	for d := range spans {
		if len(spans[d]) == 0 {
			return
		}
	}
	for {
		for d, k := range q {
			s := spans[d][k]
			so[d], do[d], count[d] = s.src, s.dst, s.n
		}
		copyBox(box{data: dst.data, shape: dst.shape, origin: do}, box{data: src.data, shape: src.shape, origin: so}, count, item)
		d := nd - 1
		for ; d >= 0; d-- {
			if q[d]++; q[d] < len(spans[d]) {
				break
			}
			q[d] = 0
		}
		if d < 0 {
			return
		}
	}
}
