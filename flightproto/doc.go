// Package flightproto holds the Flight protocol's request, reply, descriptor
// and ticket types, shared by the server (api/) and clients: action names
// and their JSON bodies, the DoPut command and reply, DoGet tickets (plain
// and op tickets), an array shuffle's Layout, and the record form of array
// chunks. It also holds what both ends of a Flight connection use to move
// batches: Dial and ServerOptions (message limits, a codec and a buffer
// pool that copy and clear less than gRPC's defaults), DialAuth and
// ClientAuth (TLS, client certificate and bearer token of a client),
// Writer (a Flight record writer that presizes and reuses its body buffer)
// and Reader (a record reader that builds batches over the received
// message without copying; NewPooledReader's messages come from, and go
// back to, their connection's Pool as their records are released). A Pool
// belongs to its owner (a node's API server, a client): nothing in the
// package is shared by the whole process.
//
// It imports no part of the engine (service, dht, spill), so a program that
// only calls a cluster links Arrow and gRPC but not memberlist, libp2p or
// badger. Its types are plain values, safe to copy and share; a Writer
// belongs to one stream.
package flightproto
