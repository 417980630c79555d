// Package simnet is an in-memory cluster network for tests: N nodes in one
// process, each with a Handler, that implement service.Network without
// sockets, with seeded faults (delay, lost requests, lost replies,
// duplicate deliveries), partitions, and node loss with the membership
// events the real cluster (package dht) would give.
//
// # Use
//
//	net, _ := simnet.New(simnet.Config{Rand: rand.New(rand.NewPCG(seed, 0)), MaxDelay: time.Millisecond})
//	defer net.Close()
//	nd, _ := net.Add("node-0", svc.Handle) // nd.SetStreamHandler(svc.HandleStream); svc.Attach(nd)
//	...
//	net.Kill("node-2") // the others get a member.Failed event
//
// # Delivery
//
// Request(ctx, to, t, payload) copies payload, then, on a new goroutine
// owned by the Network, waits the drawn delay and calls the destination's
// Handler with the copy and the destination's context (cancelled when that
// node is killed, leaves, or the Network closes), as dht does for an inbound
// stream. The reply payload is copied back. The caller waits for the reply
// or for its ctx; a caller that gives up does not stop the handler.
// A request to the node itself calls its Handler directly on the caller's
// goroutine, without copies or faults, as dht does.
//
// Per request to another node, Config.Rand decides (in the order requests
// arrive, under one lock) whether the request is lost before the handler
// runs, whether the reply is lost after it ran, whether the frame is
// delivered a second time (on its own goroutine, after its own delay; that
// reply is thrown away), and how long each delivery waits. A lost request
// or reply, a cut link, or a destination lost while the request was in
// flight fail the Request with an error matching ErrTransport: as on the
// real network, the handler may or may not have run. The seed makes the
// decisions reproducible, not the goroutines' interleaving.
//
// # Guarantees
//
// None beyond the real network's: requests are not ordered with respect to
// each other (concurrent requests overtake one another under jitter), a
// handler may run twice for one Request, and any number of handlers run at
// once. Busy and Refused replies come back as errors matching wire.ErrBusy
// and wire.ErrRefused, with the frame, as from dht.Node.Request.
//
// What it does not model: frame encoding, size limits and checksums; the
// receiver's bound on inbound bytes (dht answers Busy when it is reached;
// here only the Handler can); failure-detection delay; gossip.
//
// # Membership
//
// Members lists the nodes that are neither killed nor gone, sorted by name:
// every node sees the same list at once (no failure-detection delay). Add
// emits member.Joined to the nodes already there; Kill emits member.Failed
// and Leave member.Left to the others, and close the lost node's own
// subscriptions. Cut and Isolate only break links: like a real partition
// they emit no event until the test calls Kill. Partition breaks links and
// also emits what failure detection would: each side gets member.Failed
// for the nodes of the others (Members is unchanged), and Heal then gets
// member.Joined to both ends. Subscribe never drops
// events (an unbounded queue per subscriber, as in dht).
//
// # Concurrency
//
// All methods are safe for concurrent use. Close is idempotent and waits
// for every goroutine the Network started, so Handlers must return once
// their ctx is cancelled.
package simnet
