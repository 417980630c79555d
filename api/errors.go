package api

import "errors"

// ErrVersion: the request names a protocol version this node does not
// speak (flightproto.ProtocolVersion). It maps to Unimplemented.
var ErrVersion = errors.New("api: unsupported protocol version")

// ErrSecurity is wrapped by every error in a Security (a missing file, a
// certificate without its key).
var ErrSecurity = errors.New("api: invalid API security settings")
