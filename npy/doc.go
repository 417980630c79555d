// Package npy reads and writes NumPy's .npy files (format versions 1.0,
// 2.0 and 3.0): a magic string, a version, a header length and a Python
// dict literal with 'descr' (the dtype), 'fortran_order' and 'shape',
// followed by the array's bytes. It is the on-disk form of one process's
// local array for the redistribute command.
//
// Only C-order arrays of the dtypes package rechunk knows are read; a
// Fortran-order file is ErrFortran. Bytes are kept as they are (no byte
// swapping), as everywhere in the engine.
//
// The package has no goroutines and no state.
package npy
