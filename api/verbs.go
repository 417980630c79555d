package api

// The standard Flight verbs besides the shuffle's own: ListActions,
// GetSchema and Handshake.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/shufflenode/shufflenode/flightproto"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ListActions lists every action with a one-line description.
func (s *Server) ListActions(_ *flight.Empty, stream flight.FlightService_ListActionsServer) error {
	for _, a := range flightproto.Actions() {
		if err := stream.Send(&flight.ActionType{Type: a.Type, Description: a.Description}); err != nil {
			return err
		}
	}
	return nil
}

// GetSchema returns the schema of a shuffle's DoGet streams (a dataframe's
// table schema, or the array chunk schema); the descriptor's cmd is a
// ShuffleRef.
func (s *Server) GetSchema(_ context.Context, d *flight.FlightDescriptor) (*flight.SchemaResult, error) {
	var ref flightproto.ShuffleRef
	if d == nil || json.Unmarshal(d.Cmd, &ref) != nil {
		return nil, status.Error(codes.InvalidArgument, "get schema: the descriptor's cmd must be a ShuffleRef as JSON")
	}
	schema, err := s.outputSchema(ref.Shuffle)
	if err != nil {
		return nil, toStatus(fmt.Errorf("get schema of shuffle %q: %w", ref.Shuffle, err))
	}
	return &flight.SchemaResult{Schema: flightproto.SerializeSchema(schema, s.mem)}, nil
}

// Handshake answers a client's handshake with this node's protocol
// version: protocol_version, and a HandshakeReply as JSON in the payload.
// A client may send one request or none. On a node with a token, the
// token guard (security.go) has checked the call's bearer token before
// Handshake runs: a Handshake that gets a reply proves the token right,
// and the reply's auth says the node requires it; one without the token
// fails with Unauthenticated like every other call.
func (s *Server) Handshake(stream flight.FlightService_HandshakeServer) error {
	if _, err := stream.Recv(); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	b, _ := json.Marshal(flightproto.HandshakeReply{Version: flightproto.ProtocolVersion, Revision: flightproto.ProtocolRevision, Node: s.svc.Name(), Auth: s.auth})
	return stream.Send(&flight.HandshakeResponse{ProtocolVersion: flightproto.ProtocolVersion, Payload: b})
}

// checkVersion refuses a request's protocol version v unless this node
// speaks it (0: the client did not say).
func checkVersion(v int, shuffle string) error {
	if v == 0 || v == flightproto.ProtocolVersion {
		return nil
	}
	return fmt.Errorf("%w: create of shuffle %s asks for protocol version %d; node speaks %d",
		ErrVersion, shuffle, v, flightproto.ProtocolVersion)
}
