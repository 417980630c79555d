// Package dht is the cluster layer of shufflenode: membership and failure
// detection (hashicorp/memberlist), authenticated peer streams (go-libp2p)
// and peer routing plus small records (go-libp2p-kad-dht).
//
// # What a Node does
//
// New starts one member: it loads or creates the node's identity
// (DataDir/identity.key, an Ed25519 libp2p key kept across restarts), starts
// a libp2p host (TCP, TLS 1.3 whose records of one write leave in one
// socket write (coalescedConn), yamux; optional private-network key; no
// relay, AutoNAT or metrics; a resource manager with counted limits:
// MaxConns connections, MaxPeerStreams streams per peer each way, bounded
// handshakes; members protected from the connection manager), kad-dht in
// server mode under the private prefix "/shufflenode" with no public
// bootstrap peers, and memberlist, then joins the seeds.
//
// Only members talk: a connection gater admits a libp2p connection only
// when the peer at the other end (its TLS-authenticated peer ID) is a
// memberlist member; an inbound one from a peer not listed yet waits up to
// 1 s for memberlist to list it (a joiner dials the members it learned in
// its join before they have merged its state). Anyone else cannot open
// request streams or use kad-dht (store or read records). Membership
// itself is open to whoever reaches the gossip port unless GossipKey is
// set: set it (and NetworkKey) on untrusted networks.
//
// Each member gossips compact binary metadata (see meta): its peer ID,
// libp2p addresses, client-API address, a random boot nonce and a "leaving"
// flag. When memberlist reports a member, its addresses go into the
// peerstore before Members lists it (so Request works at once), it is
// dialled in the background, and kad-dht adds it to its routing table; a
// failed or departed member is removed again.
//
// Events: MemberJoin, MemberLeave (the member called Leave, which first
// gossips the leaving flag), MemberFail (memberlist declared it dead, or
// it restarted: a changed boot nonce or peer ID is a failure followed by a
// join, because the restarted process lost its memory).
//
// Requests: Request writes one wire frame on a stream of protocol
// PeerProtocol and reads one reply frame; the receiver's Handler produces
// the reply. Streams are pooled per member and carry one exchange at a
// time; a stream that failed is never reused. Busy and Refused replies come back as errors
// matching ErrBusy and ErrRefused (wire.BusyError, wire.Refusal), together
// with the frame. Requests to the node itself call the Handler directly.
//
// Records: PutRecord/GetRecord store small values in kad-dht under
// "/shufflenode/<key>"; the newest put wins (see PutRecord), except under
// a key prefix with a Config.RecordRules rule: every node then refuses the
// values the rule rejects and keeps the one of the highest rank (shuffle
// records: the highest coordinator term, then epoch). A rule marked Signed
// also takes only values signed by a member (a peer this node lists or
// listed since it started) with its libp2p key, over the key, version and
// value (see signed.go). With an empty routing table they work on the
// local store only.
//
// # The caller's duties
//
//   - Give every node a unique Config.Name and, to keep its peer ID, a
//     DataDir of its own.
//   - Subscribe before reading Members, and keep reading the channel (events
//     queue up in memory otherwise).
//   - Return from Handlers when their ctx is cancelled: Close waits for them.
//   - Call Leave before Close for a graceful exit; Close alone looks like a
//     crash to the others (tests use this).
//   - go-libp2p logs through a process-wide logger: the binary may call
//     SetLibp2pLogHandler once at start. memberlist's logs go to
//     Config.Logger.
//
// # Concurrency
//
// All Node methods are safe for concurrent use. memberlist calls the
// node's delegates on its own goroutines; they only update maps, the
// peerstore and subscriber queues and never block. Handlers run on one
// goroutine per inbound stream, any number at a time. Close is idempotent
// and waits for the goroutines the node started (handlers, background
// dials, subscriber pumps).
//
// Start/StartNodes run several nodes in one process (the demo command and
// package dhttest).
package dht
