package bench

import "errors"

// Sentinel errors of the jobs' own machinery (the jobs pass the errors of
// the packages they drive through, wrapped).
var (
	// ErrProcs: serve processes could not be started or did not form one
	// cluster.
	ErrProcs = errors.New("bench: serve processes")
	// ErrBench: an invalid BenchConfig.
	ErrBench = errors.New("bench: bench")
)
