// Package client is the Go client of shufflenode's Flight API.
//
// Client talks to one node (and dials owners to read outputs). Run drives a
// whole shuffle: create it on the first node, put every input task on the
// node where it lives (task i on node i mod N), retry a put that failed with
// a new attempt number, wait at the barrier, and hand back a Result that
// reads output partitions from their owners. Small dataframe tasks go
// several to a DoPut stream (PutTasks, Job.PutBatch) to nodes that take
// that (protocol revision 4 on; small array chunks from revision 5); each
// is still its own attempt, and one that fails with a retryable code is run
// again in a put of its own. ReadMany and VisitChunks read several of one
// owner's partitions in one DoGet.
//
// DialAuth (and Job.Auth) connect with TLS, a client certificate and/or a
// bearer token (flightproto.ClientAuth); the connections to other members
// use the same settings.
//
// A Client keeps a few gRPC connections to each node it talks to and
// spreads its calls over them. A Client is safe for concurrent use.
//
// Records handed to a read function (Read, Op, Join, Sort) follow Arrow's
// reference counting strictly: their memory is a received message's buffer,
// which goes back to a pool for later messages once the record is released
// (flightproto.NewPooledReader). Keep a record, or any slice of its
// buffers, past the call only by Retaining it. ReadChunk's chunks are the
// caller's to keep; VisitChunk's are valid during its function only.
package client
