package service

import "github.com/shufflenode/shufflenode/nodeconfig"

// Config configures a Service (package nodeconfig). The zero value of a
// field means its default.
type Config = nodeconfig.Config

// Default limits on what clients may ask of a node (Config.MaxShuffles,
// MaxTasks, MaxPartitions, MaxRuns; package nodeconfig).
const (
	DefaultMaxShuffles   = nodeconfig.DefaultMaxShuffles
	DefaultMaxTasks      = nodeconfig.DefaultMaxTasks
	DefaultMaxPartitions = nodeconfig.DefaultMaxPartitions
	DefaultMaxRuns       = nodeconfig.DefaultMaxRuns
)

// DefaultConfig returns the configuration with every default filled in.
func DefaultConfig() Config { return nodeconfig.Default() }
