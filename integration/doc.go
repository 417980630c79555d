// Package integration holds tests that run several real shufflenode nodes
// (memberlist gossip, libp2p streams, badger spill files, Arrow Flight) on
// 127.0.0.1 and check every shuffle with an independent verifier: every row
// arrives exactly once, in the partition its key maps to.
package integration
