package api

import "errors"

// ErrVersion: the request names a protocol version this node does not
// speak (flightproto.ProtocolVersion). It maps to Unimplemented.
var ErrVersion = errors.New("api: unsupported protocol version")
