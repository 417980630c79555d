package simnet

import "errors"

// Sentinel errors, wrapped with %w and the request and node they concern.
var (
	// ErrConfig: a Config field is invalid.
	ErrConfig = errors.New("simnet: invalid config")
	// ErrClosed: the Network is closed, or the sending node was lost.
	ErrClosed = errors.New("simnet: closed")
	// ErrUnknownMember: the destination is not a live member.
	ErrUnknownMember = errors.New("simnet: unknown member")
	// ErrExists: Add named a node that was already added.
	ErrExists = errors.New("simnet: node already exists")
	// ErrTransport: the request or its reply was lost (a drawn drop, a cut
	// link, the destination lost meanwhile, or the caller's ctx ended). The
	// handler may or may not have run.
	ErrTransport = errors.New("simnet: transport error")
	// ErrNotFound: no record under that key.
	ErrNotFound = errors.New("simnet: record not found")
)
