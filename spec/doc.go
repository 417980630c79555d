// Package spec describes one shuffle as a client creates it: its ID, kind,
// number of input tasks and output partitions, and for dataframes the Arrow
// schema and the rule that maps rows to partitions.
//
// A Spec travels as JSON: from the client to the node that becomes the
// shuffle's coordinator, and from the coordinator to every member. Validate
// checks everything a node needs before any data moves, so a bad spec fails at
// create time with an error naming the field. The package is pure: no network
// or storage.
package spec
