// Package integration holds tests that run several real shufflenode nodes
// (memberlist gossip, libp2p streams, badger spill files, Arrow Flight) on
// 127.0.0.1 and check every shuffle with an independent verifier: every row
// arrives exactly once, in the partition its key maps to. The TestNetns
// tests run serve processes on separate addresses, one Linux network
// namespace each (integration/netns), with slow links and partitions; they
// need root and skip without it.
package integration
