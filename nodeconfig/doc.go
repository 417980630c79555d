// Package nodeconfig is the configuration of one node's shuffle engine
// (service.Config, an alias of Config): its fields, their defaults
// (Default, Config.WithDefaults), how MemoryLimit is split among the
// node's buffers (Config.Memory, package limits), and the memory the node
// needs on top (Config.MemoryOverhead).
//
// # Concurrency
//
// A Config is a value; its methods are pure and safe for concurrent use.
package nodeconfig
