package api

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/shufflenode/shufflenode/api/apitest"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/table"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestCallMessageLimit: over a real connection (plaintext, and TLS, where
// the credentials scan the decrypted bytes), a unary call, a server
// stream's request and a Handshake message larger than the call limit are
// refused ResourceExhausted, unread; the connection stays usable;
// a DoPut of a batch larger than that limit is not refused for its size.
func TestCallMessageLimit(t *testing.T) {
	const limit = 64 << 10
	ca := apitest.NewCA(t, "cluster")
	cert, key := ca.Leaf("server")
	for _, tc := range []struct {
		name string
		sec  Security
		auth flightproto.ClientAuth
	}{
		{"plaintext", Security{Limits: Limits{MaxCallMessage: limit}}, flightproto.ClientAuth{}},
		{"TLS", Security{CertFile: cert, KeyFile: key, Limits: Limits{MaxCallMessage: limit}}, flightproto.ClientAuth{CAFile: ca.File}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ctx := dialFor(t, startSecure(t, tc.sec), tc.auth)
			big := bytes.Repeat([]byte("x"), 4*limit)
			mention := []string{"larger than max"}

			_, err := c.GetSchema(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: big})
			wantCode(t, err, codes.ResourceExhausted, mention...)
			_, err = c.GetFlightInfo(ctx, &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: big})
			wantCode(t, err, codes.ResourceExhausted, mention...)
			stream, err := c.DoAction(ctx, &flight.Action{Type: flightproto.ActionStatus, Body: big})
			if err == nil {
				_, err = stream.Recv()
			}
			wantCode(t, err, codes.ResourceExhausted, mention...)
			hs, err := c.Handshake(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err = hs.Send(&flight.HandshakeRequest{Payload: big}); err == nil {
				_, err = hs.Recv()
			}
			wantCode(t, err, codes.ResourceExhausted, mention...)

			// The same connection still serves calls under the limit.
			body, _ := json.Marshal(flightproto.ShuffleRef{Shuffle: "nope"})
			stream, err = c.DoAction(ctx, &flight.Action{Type: flightproto.ActionStatus, Body: body})
			if err == nil {
				_, err = stream.Recv()
			}
			wantCode(t, err, codes.NotFound)

			rec := table.GenTask(nil, table.GenConfig{Rows: 20000}, 0, 1)
			defer rec.Release()
			frames := putFrames(t, flightproto.PutCmd{Shuffle: "nope", Task: 0, Attempt: 0}, rec)
			if n := len(frames[1].DataBody); n <= limit {
				t.Fatalf("the batch is %d bytes, not over the %d limit", n, limit)
			}
			err = sendPut(ctx, c, frames)
			if status.Code(err) == codes.ResourceExhausted || status.Code(err) == codes.Unavailable {
				t.Fatalf("a DoPut of a batch over the call limit: %v", err)
			}
		})
	}
}

// h2 writes the client side of an HTTP/2 connection for the scanner.
type h2 struct {
	buf bytes.Buffer
	fr  *http2.Framer
	enc *hpack.Encoder
	hb  bytes.Buffer
}

func newH2() *h2 {
	c := &h2{}
	c.buf.WriteString(clientPreface)
	c.fr = http2.NewFramer(&c.buf, nil)
	c.enc = hpack.NewEncoder(&c.hb)
	if err := c.fr.WriteSettings(); err != nil {
		panic(err)
	}
	return c
}

// call opens stream id of method, its header block split in two frames.
func (c *h2) call(id uint32, method string, end bool) {
	c.hb.Reset()
	for _, f := range []hpack.HeaderField{{Name: ":method", Value: "POST"}, {Name: ":scheme", Value: "http"},
		{Name: ":path", Value: "/arrow.flight.protocol.FlightService/" + method}, {Name: "content-type", Value: "application/grpc"}} {
		_ = c.enc.WriteField(f)
	}
	b := c.hb.Bytes()
	_ = c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: b[:3], EndStream: end, PadLength: 2, Priority: http2.PriorityParam{Weight: 1}})
	_ = c.fr.WriteContinuation(id, true, b[3:])
}

// msg is a gRPC message of n bytes (its prefix and body).
func msg(n int) []byte {
	out := make([]byte, 5+n)
	binary.BigEndian.PutUint32(out[1:5], uint32(n))
	return out
}

// TestScanRewrites: the scanner rewrites the prefix of a small method's
// message over the limit (padded frames, headers in a continuation, many
// messages in a frame), leaves DoPut's alone, and closes the connection
// on an oversized prefix split across frames.
func TestScanRewrites(t *testing.T) {
	c := newH2()
	c.call(1, "GetSchema", false)
	_ = c.fr.WriteDataPadded(1, true, msg(200), []byte{0, 0, 0})
	c.call(3, "DoPut", false)
	_ = c.fr.WriteData(3, false, msg(200))
	c.call(5, "Handshake", false)
	_ = c.fr.WriteData(5, false, append(msg(10), msg(150)...))
	wire := c.buf.Bytes()
	s := newScan(100)
	for off := 0; off < len(wire); { // in small reads, as scanConn does
		n, err := s.scan(wire[off:min(off+7, len(wire))])
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 && off+7 < len(wire) { // a cut prefix: read it again with more
			n2, err := s.scan(wire[off:min(off+14, len(wire))])
			if err != nil || n2 == 0 {
				t.Fatalf("a held prefix read again: %d, %v", n2, err)
			}
			n = n2
		}
		off += n
	}
	fr := http2.NewFramer(nil, bytes.NewReader(wire[len(clientPreface):]))
	var lengths []uint32
	for {
		f, err := fr.ReadFrame()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if d, ok := f.(*http2.DataFrame); ok {
			b := d.Data()
			lengths = append(lengths, binary.BigEndian.Uint32(b[1:5]))
			if len(b) == 15+155 { // the two Handshake messages
				lengths = append(lengths, binary.BigEndian.Uint32(b[16:20]))
			}
		}
	}
	want := []uint32{^uint32(0), 200, 10, ^uint32(0)}
	if len(lengths) != len(want) {
		t.Fatalf("lengths %v, want %v", lengths, want)
	}
	for i := range want {
		if lengths[i] != want[i] {
			t.Errorf("message %d: length %d, want %d", i, lengths[i], want[i])
		}
	}
	if len(s.streams) != 1 { // stream 1 ended; 3 is DoPut; 5 is open
		t.Errorf("%d streams tracked, want 1", len(s.streams))
	}

	split := newH2()
	split.call(1, "GetSchema", false)
	m := msg(200)
	_ = split.fr.WriteData(1, false, m[:3])
	_ = split.fr.WriteData(1, true, m[3:])
	if _, err := newScan(100).scan(split.buf.Bytes()); err == nil || !strings.Contains(err.Error(), "split") {
		t.Errorf("an oversized prefix split across frames: %v, want the connection closed", err)
	}
}

// FuzzScan: any bytes after the preface end in an error or in a scanner
// within its bounds, and never change a byte outside a message prefix's
// length.
func FuzzScan(f *testing.F) {
	c := newH2()
	c.call(1, "GetSchema", false)
	_ = c.fr.WriteData(1, true, msg(200))
	f.Add(c.buf.Bytes()[len(clientPreface):])
	f.Add([]byte{0, 0, 1, 1, 0x28, 0, 0, 0, 1, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		s := newScan(100)
		in := append([]byte(clientPreface), data...)
		orig := bytes.Clone(in)
		n, err := s.scan(in)
		if err != nil {
			return
		}
		if len(in)-n > 4 {
			t.Fatalf("%d bytes held back", len(in)-n)
		}
		if len(s.streams) > maxTracked || len(s.block) > maxHeaderBlock {
			t.Fatalf("bounds: %d streams, block %d", len(s.streams), len(s.block))
		}
		for i := range in {
			if in[i] != orig[i] && in[i] != 0xff {
				t.Fatalf("byte %d changed to %#x", i, in[i])
			}
		}
	})
}
