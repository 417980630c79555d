package npy

import "errors"

// Sentinel errors, wrapped with the file they concern.
var (
	// ErrFormat means the file is not a .npy file this package can read.
	ErrFormat = errors.New("npy: not a .npy file")
	// ErrFortran means the array is stored in Fortran order.
	ErrFortran = errors.New("npy: Fortran-order arrays are not supported")
)
