package zarr

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// codec compresses and decompresses the chunks of one array. It is safe for
// concurrent use: zstd's EncodeAll and DecodeAll are, and zlib readers and
// writers come from pools.
type codec struct {
	comp    *Compressor
	zstdEnc *zstd.Encoder
	zstdDec *zstd.Decoder
	zlibW   sync.Pool // *zlib.Writer
	zlibR   sync.Pool // io.ReadCloser that is a zlib.Resetter
}

// newCodec returns the codec of comp (nil: raw chunks).
func newCodec(comp *Compressor) (*codec, error) {
	c := &codec{comp: comp}
	if comp == nil || comp.ID != CompressorZstd {
		return c, nil
	}
	var err error
	c.zstdDec, err = zstd.NewReader(nil, zstd.WithDecodeAllCapLimit(true))
	if err != nil {
		return nil, fmt.Errorf("zstd decoder: %w", err)
	}
	lvl := zstd.EncoderLevelFromZstd(comp.Level)
	c.zstdEnc, err = zstd.NewWriter(nil, zstd.WithEncoderLevel(lvl))
	if err != nil {
		c.zstdDec.Close()
		return nil, fmt.Errorf("zstd encoder: %w", err)
	}
	return c, nil
}

// close releases the zstd encoder and decoder.
func (c *codec) close() {
	if c.zstdDec != nil {
		c.zstdDec.Close()
	}
	if c.zstdEnc != nil {
		_ = c.zstdEnc.Close() // only flushes a stream; none is open
	}
}

// maxEncoded bounds the size of the stored form of a chunk of n bytes: raw
// chunks are exactly n; zlib and zstd expand incompressible data by well
// under n/8 plus a header.
func (c *codec) maxEncoded(n int) int {
	if c.comp == nil {
		return n
	}
	return n + n/8 + 1024
}

// encode returns the stored form of src (src itself for raw chunks).
func (c *codec) encode(src []byte) ([]byte, error) {
	switch {
	case c.comp == nil:
		return src, nil
	case c.zstdEnc != nil:
		return c.zstdEnc.EncodeAll(src, make([]byte, 0, len(src)/2+64)), nil
	}
	return c.zlibEncode(src)
}

// zlibEncode compresses src with a pooled zlib writer.
func (c *codec) zlibEncode(src []byte) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(src)/2 + 64)
	w, _ := c.zlibW.Get().(*zlib.Writer)
	if w == nil {
		var err error
		if w, err = zlib.NewWriterLevel(&buf, c.comp.Level); err != nil {
			return nil, fmt.Errorf("zlib level %d: %w: %w", c.comp.Level, ErrCompressor, err)
		}
	} else {
		w.Reset(&buf)
	}
	_, err := w.Write(src)
	if err == nil {
		err = w.Close()
	}
	c.zlibW.Put(w)
	return buf.Bytes(), err
}

// decode returns the n bytes that src decompresses to. It never produces
// more than n+1 bytes: a stream that decodes to more or fewer than n bytes
// is ErrCorrupt. Raw chunks are returned as src itself.
func (c *codec) decode(src []byte, n int) ([]byte, error) {
	switch {
	case c.comp == nil:
		if len(src) != n {
			return nil, fmt.Errorf("raw chunk of %d bytes, want %d: %w", len(src), n, ErrCorrupt)
		}
		return src, nil
	case c.zstdDec != nil:
		return c.zstdDecode(src, n)
	}
	return c.zlibDecode(src, n)
}

// zstdDecode decodes src into a buffer of capacity n+1, which bounds the
// output (WithDecodeAllCapLimit).
func (c *codec) zstdDecode(src []byte, n int) ([]byte, error) {
	out, err := c.zstdDec.DecodeAll(src, make([]byte, 0, n+1))
	if errors.Is(err, zstd.ErrDecoderSizeExceeded) {
		return nil, fmt.Errorf("zstd chunk decodes to over %d bytes: %w", n, ErrCorrupt)
	}
	if err != nil {
		return nil, fmt.Errorf("zstd: %w: %w", ErrCorrupt, err)
	}
	if len(out) != n {
		return nil, fmt.Errorf("zstd chunk decodes to %d bytes, want %d: %w", len(out), n, ErrCorrupt)
	}
	return out, nil
}

// zlibDecode reads exactly n bytes from the zlib stream src, then checks
// that the stream ends there (which also verifies its checksum).
func (c *codec) zlibDecode(src []byte, n int) ([]byte, error) {
	r, err := c.zlibReader(src)
	if err != nil {
		return nil, fmt.Errorf("zlib: %w: %w", ErrCorrupt, err)
	}
	defer c.zlibR.Put(r)
	out := make([]byte, n)
	if k, err := io.ReadFull(r, out); err != nil {
		return nil, fmt.Errorf("zlib chunk decodes to %d bytes, want %d: %w: %w", k, n, ErrCorrupt, err)
	}
	var one [1]byte
	switch _, err := io.ReadFull(r, one[:]); {
	case err == nil:
		return nil, fmt.Errorf("zlib chunk decodes to over %d bytes: %w", n, ErrCorrupt)
	case err != io.EOF:
		return nil, fmt.Errorf("zlib: %w: %w", ErrCorrupt, err)
	}
	return out, nil
}

// zlibReader returns a pooled zlib reader reset to src.
func (c *codec) zlibReader(src []byte) (io.ReadCloser, error) {
	if r, ok := c.zlibR.Get().(io.ReadCloser); ok {
		if err := r.(zlib.Resetter).Reset(bytes.NewReader(src), nil); err != nil {
			c.zlibR.Put(r)
			return nil, err
		}
		return r, nil
	}
	return zlib.NewReader(bytes.NewReader(src))
}
