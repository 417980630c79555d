// Package netns builds a multi-host test network on one Linux machine:
// one network namespace per node, each joined by a veth pair to a bridge
// in the root namespace, each node with its own address in 10.201.0.0/16
// (one /24 per network: 10.201.K.0/24, the bridge holds 10.201.K.1, node i
// holds 10.201.K.(10+i)). Traffic goes only between those addresses; the
// test process, in the root namespace, reaches every node through the
// bridge. A Host's link can be shaped (latency, jitter, loss, rate) and
// cut (the link set down: a partition of that node from every other node
// and from the test process).
//
// Shaping does not use tc netem, which many kernels lack: a delay, jitter
// or loss starts the Net's link emulator (emulate.go), a small switch in
// the test process. Each host gets a TUN device (MTU 65000) that carries
// its traffic to every other host; the test process forwards each packet
// from the sender's TUN to the receiver's, applying the sender's link
// shape and then the receiver's (so 20 ms on every link is 40 ms one way
// between two hosts), with uniform jitter that may reorder packets,
// random loss and a rate (a queue of 200 ms, at least 256 KiB, dropped
// beyond). Cut and Split stop its forwarding too. Traffic between a host
// and the test process stays on the veths: a Rate applies there too (tc
// tbf), a delay or loss does not. A Rate alone uses tbf only, until the
// emulator runs.
//
// Caller's duties: run as root on Linux with iproute2 (ip, tc); run node
// processes with Host.Command (ip netns exec); stop them before Close
// (t.Cleanup runs last-registered first, so register the network before
// the processes). New picks a /24 and names that no other live network
// uses (the bridge name is the lock), so parallel runs do not collide, and
// first removes what runs that died without Close left behind (their
// namespace names carry their process ID). Without root, iproute2 or
// namespace support, New fails with ErrUnavailable and ForTest skips.
// Without TUN devices (/dev/net/tun), Shape with a delay, jitter or loss
// fails with ErrNoNetem (CheckNetem probes for it).
//
// How to run the tests that use it (root needed, nothing else):
//
//	sudo env "PATH=$PATH" go test -run TestNetns ./integration/
//
// Concurrency: a Net's methods may be called from several goroutines;
// each runs ip or tc commands that the kernel serialises, and the
// emulator's state is under one mutex.
package netns
