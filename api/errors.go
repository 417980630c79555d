package api

import "errors"

// ErrVersion: the request names a protocol version this node does not
// speak (flightproto.ProtocolVersion). It maps to Unimplemented.
var ErrVersion = errors.New("api: unsupported protocol version")

// ErrSecurity is wrapped by every error in a Security (a missing file, a
// certificate without its key).
var ErrSecurity = errors.New("api: invalid API security settings")

// ErrWriteRefused: an op asked the node to write a file where it may not
// (outside its output roots, or it has none). It maps to PermissionDenied.
var ErrWriteRefused = errors.New("api: write refused")

// ErrReadRefused: a put asked the node to read an input file it may not
// (outside its input roots, or it has none). It maps to PermissionDenied.
var ErrReadRefused = errors.New("api: read refused")
