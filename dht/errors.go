package dht

import (
	"errors"

	"github.com/shufflenode/shufflenode/wire"
)

// Sentinel errors of this package. Functions wrap them with %w and the node
// (member name or peer ID) or record key they concern; match them with
// errors.Is.
var (
	// ErrConfig: a Config field is invalid. New and Validate wrap it with the
	// field's name.
	ErrConfig = errors.New("dht: invalid config")
	// ErrClosed: the Node was closed (or is closing).
	ErrClosed = errors.New("dht: node closed")
	// ErrJoin: none of the seeds in Config.Join could be contacted.
	ErrJoin = errors.New("dht: cannot join cluster")
	// ErrUnknownMember: Request named a node that is not a live member.
	ErrUnknownMember = errors.New("dht: unknown member")
	// ErrNotFound: GetRecord found no value under the key, or FindPeer no
	// addresses for the peer.
	ErrNotFound = errors.New("dht: not found")
	// ErrIdentity: the identity key in the data directory cannot be read,
	// parsed or written.
	ErrIdentity = errors.New("dht: identity key")
	// ErrMeta: a member's memberlist metadata cannot be encoded or decoded.
	ErrMeta = errors.New("dht: bad member metadata")
	// ErrRecord: a record key is empty or a value is over MaxRecordSize.
	ErrRecord = errors.New("dht: invalid record")
	// ErrRecordSignature: a value of a signed record rule was not written
	// by a member, or its signature does not verify.
	ErrRecordSignature = errors.New("dht: record not signed by a member")
	// ErrTransport: a request could not be delivered or its reply not read
	// (dial, stream, frame or deadline error). The request may or may not
	// have been handled by the peer.
	ErrTransport = errors.New("dht: transport error")

	// ErrBusy is wire.ErrBusy: Request returns an error matching it (a
	// *wire.BusyError, see wire.RetryAfterOf) when the peer replied Busy.
	ErrBusy = wire.ErrBusy
	// ErrRefused is wire.ErrRefused: Request returns an error matching it (a
	// *wire.Refusal, see wire.RefusalCodeOf) when the peer replied Refused.
	ErrRefused = wire.ErrRefused
)
