// Package dap reads and writes the Distributed Array Protocol (DAP): the
// per-process description (dim_data) of the local arrays of an MPI-style
// distributed array, and turns a set of them, or a target distribution, into
// the run axes of an array shuffle (splitaxes.Dist).
//
// # Input
//
// Decode parses one process's JSON ({"__version__": ..., "dim_data": [...]})
// and checks each dimension dictionary on its own: its keys for its
// dist_type ('b' start/stop/padding/periodic, 'c' start/block_size, 'u'
// indices), their values, and the buffer shape. FromLocals checks the set
// across processes (process i is rank i): the process grid, that every
// global index is owned exactly once, padding, sizes. Every error names the
// process, the axis and the key, and wraps a sentinel of errors.go. The
// result is a Distribution: per axis the chunk (buffer) sizes per grid rank
// and a splitaxes.Dist. Communication padding is dropped on input.
//
// # Output
//
// A Target (process grid plus per-axis dist_type, block_size and
// communication padding width) becomes a Distribution over an array shape
// with Target.Distribution; its DimData(rank) is the dim_data delivered with
// output partition rank, whose buffer is that process's local array, its
// communication padding filled from the neighbours' owned data. Spec builds
// the array shuffle from an input and an output Distribution.
//
// # Periodic axes
//
// On a periodic 'b' axis the edge padding (rank 0's before, the last
// rank's after) lies inside [0, size), as the protocol's start >= 0 and
// stop <= size require, and is a ghost zone: a copy of the far end of the
// period, the indices between the two zones, wrapping around
// (splitaxes.Wrap). An input drops its ghosts like communication padding;
// an output fills them from the period; a non-periodic side of the same
// shuffle reads the array that way too (its indices in the ghost zones
// hold the copies). Both sides periodic must have the same ghost zones.
// A Target axis with Periodic set makes such an output.
//
// # What is not covered
//
// Boundary padding of a non-periodic axis counts toward size, as the
// protocol says, so it is data like any other. 'u' is input only, and
// one_to_one false (an index held twice) is refused.
//
// # Concurrency
//
// Plain data and pure functions; no goroutines, no I/O.
package dap
