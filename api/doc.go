// Package api is shufflenode's client API: an Arrow Flight (gRPC) server on
// every node. The messages it takes and gives (actions, PutCmd, tickets,
// replies) are defined in flightproto, which clients import instead of api;
// docs/flight-api.md is the protocol for clients in any language.
//
//   - DoAction "create": body is a spec.Spec as JSON, optionally with the
//     client's protocol "version"; the node becomes the shuffle's
//     coordinator and replies a CreateReply.
//   - DoAction "barrier": body ShuffleRef; returns when the shuffle is sealed
//     on every member (or fails with Aborted if the shuffle failed).
//   - DoAction "status": body ShuffleRef; returns a Status as JSON.
//   - DoAction "close": body ShuffleRef; frees the shuffle on every member.
//   - DoPut: the FlightDescriptor's Cmd is a PutCmd as JSON; the stream is
//     one input task attempt's record batches. The PutResult's app metadata
//     is a PutReply as JSON. With PutCmd.Tasks, the stream carries several
//     dataframe tasks, each tagged on its first batch (flightproto.PutTag)
//     and answered by a PutResult of its own (puttasks.go).
//   - GetFlightInfo: the descriptor's Cmd is a ShuffleRef; one endpoint per
//     output partition, in partition order, whose location is the owner.
//   - DoGet: the ticket is a Ticket as JSON; any node answers (a non-owner
//     proxies the owner's stream).
//   - DoGet with an OpTicket ("op": "join" or "sort"): the node runs the
//     operation on partition p of the named shuffles (read locally where it
//     owns them, else from their owners) and streams its result (op.go).
//     Send it to the owner of p, so that only the result crosses the network.
//   - ListActions lists the actions; GetSchema (descriptor cmd ShuffleRef)
//     is a shuffle's DoGet schema; Handshake answers with the protocol
//     version, and auth "bearer" on a node with a token (the token guard
//     checked the Handshake's own token first) (verbs.go).
//
// Who may call: ListenSecure takes a Security: TLS (certificate and key),
// mutual TLS (a client CA) and/or a bearer token that a gRPC tap handle
// checks when a call's headers arrive, before any of its messages is read,
// whatever the method (the Flight verbs above and any added later). A call
// without the token fails with Unauthenticated saying what is missing, and
// costs the node its headers only. Security.Limits bound every caller's
// connections, calls per connection, idle connections and handshake time
// (limits.go). Listen is ListenSecure with no security, for loopback;
// Exposed tells which addresses need more (the binary refuses them open).
//
// Bytes a client sends are decoded by flightproto's strict reader only: a
// message it refuses (a malformed or unsupported schema, a batch that does
// not decode, a FlightData that is not protobuf) is InvalidArgument, never
// handed to a decoder that trusts the counts it claims.
//
// Errors carry gRPC status codes a client acts on: NotFound (unknown
// shuffle), InvalidArgument (bad spec or input, malformed messages), AlreadyExists,
// FailedPrecondition (not sealed, sealed), Aborted (the shuffle failed),
// Unavailable (a peer is unreachable: retry), Unimplemented (an unknown
// action or protocol version), ResourceExhausted (a create over a node's
// limits), Unauthenticated (missing or wrong token).
package api
