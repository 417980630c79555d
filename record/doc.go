// Package record is a shuffle's state as the cluster's records keep it,
// where the network keeps records (kad-dht on a real cluster: Store).
//
// A shuffle's record, under Prefix + its ID, holds its spec, pinned members
// and creator, and its lost list with the coordinator and term they imply.
// The coordinator writes it at create and after every epoch move or
// takeover; Rank is the strict rule every node applies to it (well-formed,
// consistent, the highest term and then epoch wins). A member asked to
// move a shuffle it does not hold (it missed the create) installs it from
// the record.
//
// Encoding, decoding and checking are pure; Write and Read carry a record
// to and from a Store (the network) within Timeout. When to write and what
// to do with a record read is the service's (package service).
package record
