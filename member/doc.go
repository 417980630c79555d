// Package member holds the cluster's membership vocabulary: a Member (one
// node as the others see it) and the Events that say it joined, left or
// failed. It has no behaviour and no dependencies, so the cluster layer
// (dht), the in-memory network (simnet) and the engine (service) can share
// these types without importing one another.
package member
