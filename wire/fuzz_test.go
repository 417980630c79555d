package wire

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
	"time"
)

// frameSeeds returns real encoded frames and streams of frames.
func frameSeeds() [][]byte {
	var e Encoder
	samples["small"].encode(&e)
	one := [][]byte{
		AppendFrame(nil, TypeShards, payload(100)),
		AppendFrame(nil, TypeAck, nil),
		AppendFrame(nil, TypeBusy, EncodeBusy(30*time.Millisecond)),
		AppendFrame(nil, TypeRefused, EncodeRefusal(Refusal{RefuseStaleEpoch, "epoch 2 < 3"})),
		AppendFrame(nil, TypeControl, e.Bytes()),
		AppendFrame(nil, Type(40), []byte("future")),
	}
	stream := bytes.Join(one, nil)
	return append(one, stream, stream[:len(stream)-3])
}

// FuzzDecodeFrame checks that any input decodes without a panic, that
// DecodeFrame and ReadFrame agree, that a decoded frame re-encodes to the
// same bytes, and that feeding the input in two pieces (cut at split) gives
// the same frames as feeding it whole.
func FuzzDecodeFrame(f *testing.F) {
	for i, s := range frameSeeds() {
		f.Add(s, uint(i*5))
	}
	f.Fuzz(func(t *testing.T, data []byte, split uint) {
		const limit = 1 << 16
		fr, rest, err := DecodeFrame(data, limit)
		rf, rerr := ReadFrame(bytes.NewReader(data), limit)
		vf, verr := readReserved(iotest.HalfReader(bytes.NewReader(data)), limit) // its CRC taken read by read
		if (err == nil) != (rerr == nil) || (err == nil) != (verr == nil) {
			t.Fatalf("DecodeFrame err %v, ReadFrame err %v, ReadPayloadReserved err %v", err, rerr, verr)
		}
		if err != nil {
			return
		}
		if rf.Type != fr.Type || !bytes.Equal(rf.Payload, fr.Payload) || vf.Type != fr.Type || !bytes.Equal(vf.Payload, fr.Payload) {
			t.Fatal("DecodeFrame, ReadFrame and ReadPayloadReserved disagree")
		}
		if n := len(data) - len(rest); fr.Flags == 0 && !bytes.Equal(AppendFrame(nil, fr.Type, fr.Payload), data[:n]) {
			t.Fatal("re-encoding differs")
		}
		cut := int(split % uint(len(data)+1))
		whole, werr := feedLimit(limit, data)
		parts, perr := feedLimit(limit, data[:cut], data[cut:])
		if len(whole) != len(parts) || class(werr) != class(perr) {
			t.Fatalf("whole: %d frames (%v); in two pieces: %d frames (%v)", len(whole), werr, len(parts), perr)
		}
	})
}

// readReserved reads one frame from r with ReadPayloadReserved.
func readReserved(r io.Reader, limit int) (Frame, error) {
	h, err := ReadHeader(r, limit)
	if err != nil {
		return Frame{}, err
	}
	return h.ReadPayloadReserved(r)
}

// class returns the sentinel err matches, or nil.
func class(err error) error {
	for _, s := range []error{ErrVersion, ErrTooLarge, ErrShortFrame, ErrChecksum} {
		if errors.Is(err, s) {
			return s
		}
	}
	return err
}

// feedLimit is feed with a payload limit.
func feedLimit(limit int, pieces ...[]byte) ([]Frame, error) {
	var buf []byte
	var out []Frame
	for _, piece := range pieces {
		buf = append(buf, piece...)
		for {
			f, rest, err := DecodeFrame(buf, limit)
			if errors.Is(err, ErrShortFrame) {
				break
			}
			if err != nil {
				return out, err
			}
			out = append(out, f)
			buf = rest
		}
	}
	return out, nil
}

// FuzzDecoder checks that any input decodes without a panic, and that what
// decodes cleanly re-encodes to something that decodes to the same values.
// It also runs the reply payload decoders on the input.
func FuzzDecoder(f *testing.F) {
	for _, m := range samples {
		var e Encoder
		m.encode(&e)
		f.Add(e.Bytes())
	}
	f.Add(EncodeRefusal(Refusal{RefuseSealed, "sealed at epoch 1"}))
	f.Add(EncodeBusy(time.Second))
	f.Fuzz(func(t *testing.T, data []byte) {
		d := NewDecoder(data, 1024)
		m := decodeSample(d)
		if d.Done() == nil {
			var e Encoder
			m.encode(&e)
			d2 := NewDecoder(e.Bytes(), 1024)
			if again := decodeSample(d2); d2.Done() != nil || !again.equal(m) {
				t.Fatalf("round trip of %+v failed: %v", m, d2.Err())
			}
		}
		if r, err := DecodeRefusal(data); err == nil {
			if back, err := DecodeRefusal(EncodeRefusal(r)); err != nil || back != r {
				t.Fatalf("refusal %+v: %+v, %v", r, back, err)
			}
		}
		_, _ = DecodeBusy(data)
	})
}
