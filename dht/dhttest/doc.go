// Package dhttest starts real clusters of dht nodes on 127.0.0.1 for tests.
//
// Every node listens on random loopback ports, uses the fast local timer
// profile and a temporary data directory, and is closed by tb.Cleanup.
package dhttest
