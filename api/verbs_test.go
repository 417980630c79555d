package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/simnet"
	"github.com/shufflenode/shufflenode/spec"
	"github.com/shufflenode/shufflenode/table"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// startNode serves the API of a one-node cluster (on an in-memory network)
// on loopback and returns a Flight client of it; both close with t.
func startNode(t testing.TB) flight.Client {
	t.Helper()
	fc, err := flightproto.Dial(startServer(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fc.Close() })
	return fc
}

// startServer serves the API of a one-node cluster (on an in-memory
// network) on loopback and returns its address; it closes with t.
func startServer(t testing.TB) string {
	t.Helper()
	nw, err := simnet.New(simnet.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nw.Close() })
	svc, err := service.New(service.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	nd, err := nw.Add("node-0", svc.Handle)
	if err != nil {
		t.Fatal(err)
	}
	nd.SetStreamHandler(svc.HandleStream)
	svc.Attach(nd)
	srv, err := Listen("127.0.0.1:0", svc, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(func() { srv.Close() })
	return srv.Addr()
}

// doAction runs an action and returns its results' bodies.
func doAction(t testing.TB, fc flight.Client, typ string, body any) ([][]byte, error) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := fc.DoAction(context.Background(), &flight.Action{Type: typ, Body: b})
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for {
		r, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, r.Body)
	}
}

// dataframeSpec is a small hash shuffle of the generator's schema.
func dataframeSpec(t testing.TB, id string) *spec.Spec {
	t.Helper()
	codec, err := table.NewCodec(table.GenSchema(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return &spec.Spec{ID: id, Kind: spec.Dataframe, Tasks: 2, Partitions: 3, Schema: codec.SchemaBytes(),
		Rule: table.Rule{Kind: table.Hash, Columns: []string{table.GenSchema().Field(0).Name}}}
}

func arraySpec(id string) *spec.Spec {
	return spec.ArraySpec(id, "<f8", spec.Chunks{{2, 2}}, spec.Chunks{{4}})
}

// wantCode fails t unless err has code and its message mentions each of
// mention.
func wantCode(t *testing.T, err error, code codes.Code, mention ...string) {
	t.Helper()
	if status.Code(err) != code {
		t.Fatalf("error %v, want code %s", err, code)
	}
	for _, m := range mention {
		if !strings.Contains(err.Error(), m) {
			t.Errorf("error %q does not mention %q", err, m)
		}
	}
}

// TestListActions checks that every action DoAction takes is listed once,
// with a description, and that every listed one is taken.
func TestListActions(t *testing.T) {
	fc := startNode(t)
	stream, err := fc.ListActions(context.Background(), &flight.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for {
		a, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if seen[a.Type] || a.Description == "" {
			t.Errorf("action %q listed twice or without a description (%q)", a.Type, a.Description)
		}
		seen[a.Type] = true
	}
	for _, typ := range []string{ActionCreate, ActionBarrier, ActionStatus, ActionClose, ActionMembers, ActionLayout, flightproto.ActionDrain} {
		if !seen[typ] {
			t.Errorf("action %q not listed", typ)
		}
	}
	for typ := range seen {
		if _, err := doAction(t, fc, typ, flightproto.ShuffleRef{Shuffle: "none"}); status.Code(err) == codes.Unimplemented {
			t.Errorf("listed action %q: %v", typ, err)
		}
	}
}

func TestGetSchema(t *testing.T) {
	fc := startNode(t)
	for _, sp := range []*spec.Spec{dataframeSpec(t, "df"), arraySpec("arr")} {
		if _, err := doAction(t, fc, ActionCreate, sp); err != nil {
			t.Fatalf("create %s: %v", sp.ID, err)
		}
	}
	for _, tc := range []struct {
		shuffle string
		want    *arrow.Schema
	}{
		{"df", table.GenSchema()},
		{"arr", flightproto.ArraySchema("<f8")},
	} {
		t.Run(tc.shuffle, func(t *testing.T) {
			got, err := getSchema(fc, []byte(`{"shuffle":"`+tc.shuffle+`"}`))
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(tc.want) || !got.Metadata().Equal(tc.want.Metadata()) {
				t.Errorf("schema %s, want %s", got, tc.want)
			}
		})
	}
	t.Run("unknown shuffle", func(t *testing.T) {
		_, err := getSchema(fc, []byte(`{"shuffle":"nope-1"}`))
		wantCode(t, err, codes.NotFound, "nope-1")
	})
	t.Run("bad descriptor", func(t *testing.T) {
		_, err := getSchema(fc, []byte(`not json`))
		wantCode(t, err, codes.InvalidArgument, "ShuffleRef")
	})
}

func getSchema(fc flight.Client, cmd []byte) (*arrow.Schema, error) {
	r, err := fc.GetSchema(context.Background(), &flight.FlightDescriptor{Type: flight.DescriptorCMD, Cmd: cmd})
	if err != nil {
		return nil, err
	}
	return flight.DeserializeSchema(r.Schema, memory.DefaultAllocator)
}

// TestHandshake: the reply carries the protocol version in its
// protocol_version and in its JSON payload, with or without a request.
func TestHandshake(t *testing.T) {
	fc := startNode(t)
	for _, send := range []bool{true, false} {
		stream, err := fc.Handshake(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if send {
			if err := stream.Send(&flight.HandshakeRequest{ProtocolVersion: flightproto.ProtocolVersion}); err != nil {
				t.Fatal(err)
			}
		}
		_ = stream.CloseSend()
		r, err := stream.Recv()
		if err != nil {
			t.Fatalf("handshake (request sent: %v): %v", send, err)
		}
		var p flightproto.HandshakeReply
		if err := json.Unmarshal(r.Payload, &p); err != nil || r.ProtocolVersion != flightproto.ProtocolVersion ||
			p.Version != flightproto.ProtocolVersion || p.Node != "node-0" {
			t.Errorf("handshake reply %d %s (%v), want version %d from node-0", r.ProtocolVersion, r.Payload, err, flightproto.ProtocolVersion)
		}
	}
}

// TestVersions: create and members carry the protocol version; a create
// asking for another version is refused with Unimplemented.
func TestVersions(t *testing.T) {
	fc := startNode(t)
	out, err := doAction(t, fc, ActionCreate, flightproto.CreateRequest{Spec: dataframeSpec(t, "v1"), Version: flightproto.ProtocolVersion})
	var cr flightproto.CreateReply
	if err != nil || len(out) != 1 || json.Unmarshal(out[0], &cr) != nil {
		t.Fatalf("create: %v, %q", err, out)
	}
	if want := (flightproto.CreateReply{Shuffle: "v1", Coordinator: "node-0", Version: flightproto.ProtocolVersion}); cr != want {
		t.Errorf("create reply %+v, want %+v", cr, want)
	}
	_, err = doAction(t, fc, ActionCreate, flightproto.CreateRequest{Spec: dataframeSpec(t, "v2"), Version: flightproto.ProtocolVersion + 1})
	wantCode(t, err, codes.Unimplemented, "v2", "protocol version 2")
	out, err = doAction(t, fc, ActionMembers, struct{}{})
	var mr flightproto.MembersReply
	if err != nil || len(out) != 1 || json.Unmarshal(out[0], &mr) != nil {
		t.Fatalf("members: %v, %q", err, out)
	}
	if mr.Version != flightproto.ProtocolVersion || mr.Node != "node-0" || len(mr.Members) != 1 || mr.Members[0].Name != "node-0" {
		t.Errorf("members reply %+v", mr)
	}
}

// TestDocCoversProtocol keeps docs/flight-api.md in step with the code:
// it names the protocol version, every action, and every status code the
// server maps errors to.
func TestDocCoversProtocol(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "flight-api.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	want := []string{fmt.Sprintf("protocol version %d", flightproto.ProtocolVersion)}
	for _, a := range flightproto.Actions() {
		want = append(want, fmt.Sprintf("### %s", a.Type))
	}
	for _, c := range []codes.Code{codes.NotFound, codes.InvalidArgument, codes.AlreadyExists, codes.FailedPrecondition,
		codes.Aborted, codes.Unavailable, codes.Unimplemented, codes.Canceled, codes.DeadlineExceeded, codes.Internal, codes.Unauthenticated,
		codes.ResourceExhausted, codes.PermissionDenied} {
		want = append(want, "`"+c.String()+"`")
	}
	for _, w := range want {
		if !strings.Contains(doc, w) {
			t.Errorf("docs/flight-api.md lacks %q", w)
		}
	}
}
