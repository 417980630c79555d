// Package flightproto holds the Flight protocol's request, reply, descriptor
// and ticket types, shared by the server (api/) and clients: action names
// and their JSON bodies, the DoPut command and reply, DoGet tickets (plain
// and op tickets), an array shuffle's Layout, the record form of array
// chunks, and Dial (a Flight client with the message limits the server
// uses).
//
// It imports no part of the engine (service, dht, spill), so a program that
// only calls a cluster links Arrow and gRPC but not memberlist, libp2p or
// badger. Its types are plain values, safe to copy and share.
package flightproto
