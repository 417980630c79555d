package flightproto

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// flightSeeds are encoded FlightData messages: empty, a put's first message
// (descriptor, header, body), a batch with app metadata, and one with an
// unknown field.
func flightSeeds(t testing.TB) [][]byte {
	msgs := []*flight.FlightData{
		{},
		{FlightDescriptor: &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: []byte(`{"shuffle":"s","task":3}`)},
			DataHeader: []byte("header"), DataBody: bytes.Repeat([]byte{7}, 5000)},
		{DataHeader: []byte("h"), AppMetadata: []byte(`{"node":"n1"}`), DataBody: []byte("body")},
	}
	var out [][]byte
	for _, m := range msgs {
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	unknown := protowire.AppendTag(nil, 17, protowire.VarintType)
	unknown = protowire.AppendVarint(unknown, 99)
	return append(out, append(unknown, out[2]...))
}

// checkDecode decodes b with decodeFlightData and with protobuf, and fails
// if they disagree on whether b is valid or on the fields.
func checkDecode(t *testing.T, b []byte) {
	if off := bodyOffset(b); off < 0 || off > len(b) {
		t.Fatalf("%x: body offset %d of %d bytes", b, off, len(b))
	}
	var got, want flight.FlightData
	gerr := decodeFlightData(bytes.Clone(b), &got)
	werr := proto.Unmarshal(b, &want)
	if (gerr == nil) != (werr == nil) {
		t.Fatalf("%x: decode error %v, protobuf's %v", b, gerr, werr)
	}
	if gerr != nil {
		return
	}
	if !bytes.Equal(got.DataHeader, want.DataHeader) || !bytes.Equal(got.DataBody, want.DataBody) ||
		!bytes.Equal(got.AppMetadata, want.AppMetadata) || !proto.Equal(got.FlightDescriptor, want.FlightDescriptor) {
		t.Fatalf("%x: decoded %v, protobuf %v", b, &got, &want)
	}
}

func TestDecodeFlightData(t *testing.T) {
	for _, b := range flightSeeds(t) {
		checkDecode(t, b)
	}
}

// TestDecodeFlightDataCorrupt checks truncations and random byte flips of
// the seeds against protobuf.
func TestDecodeFlightDataCorrupt(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, seed := range flightSeeds(t) {
		for n := range min(len(seed), 200) {
			checkDecode(t, seed[:n])
		}
		for range 200 {
			b := bytes.Clone(seed)
			if len(b) > 0 {
				b[rng.IntN(len(b))] = byte(rng.Uint32())
			}
			checkDecode(t, b)
		}
	}
}

func FuzzDecodeFlightData(f *testing.F) {
	for _, b := range flightSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(checkDecode)
}

// TestCodecRoundTrip marshals through the codec (pooled buffers) and
// unmarshals from a BufferSlice cut into frames, as gRPC hands it over.
func TestCodecRoundTrip(t *testing.T) {
	c := newCodec(new(bufferPool))
	for _, seed := range flightSeeds(t)[:3] {
		var in flight.FlightData
		if err := proto.Unmarshal(seed, &in); err != nil {
			t.Fatal(err)
		}
		data, err := c.Marshal(&in)
		if err != nil {
			t.Fatal(err)
		}
		flat := data.Materialize()
		data.Free()
		var frames mem.BufferSlice
		for len(flat) > 0 {
			n := min(len(flat), 1000)
			frames = append(frames, mem.SliceBuffer(flat[:n]))
			flat = flat[n:]
		}
		var out flight.FlightData
		if err := c.Unmarshal(frames, &out); err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(&in, &out) {
			t.Errorf("round trip: %v -> %v", &in, &out)
		}
	}
}

func TestBufferPool(t *testing.T) {
	var p bufferPool
	for _, n := range []int{0, 1, 4096, 4097, 1 << 20, 3 << 20, 1 << 29} {
		b := p.Get(n)
		if len(*b) != n {
			t.Fatalf("Get(%d): length %d", n, len(*b))
		}
		p.Put(b)
		if b2 := p.Get(n); len(*b2) != n {
			t.Fatalf("Get(%d) after Put: length %d", n, len(*b2))
		}
	}
}

// TestPartitionSchemaCarriesDimData checks that a partition's schema keeps
// the array columns and dtype and gives its DAP description back, and that
// a plain array schema carries none.
func TestPartitionSchemaCarriesDimData(t *testing.T) {
	local := `{"__version__":"0.10.0","dim_data":[{"dist_type":"c","size":9,"proc_grid_size":2,"proc_grid_rank":1,"start":3,"block_size":3}]}`
	s := PartitionSchema("<f4", []byte(local))
	if !s.Equal(ArraySchema("<f4")) {
		t.Errorf("schema %s, want the array schema's fields", s)
	}
	if dt, _ := s.Metadata().GetValue("dtype"); dt != "<f4" {
		t.Errorf("dtype %q", dt)
	}
	if got, ok := DimDataOf(s); !ok || string(got) != local {
		t.Errorf("DimDataOf = %s, %v; want %s", got, ok, local)
	}
	if _, ok := DimDataOf(ArraySchema("<f4")); ok {
		t.Error("a plain array schema carries dim_data")
	}
}
