package wire

import "errors"

// Sentinel errors of this package. Functions wrap them with %w and the detail
// of what went wrong (offset, length, limit); match them with errors.Is.
var (
	// ErrVersion: the frame's version byte is not Version. The stream cannot
	// be resynchronised: close it.
	ErrVersion = errors.New("wire: unsupported frame version")
	// ErrTooLarge: the frame's payload length is over the caller's limit. It
	// is reported before anything is allocated. Close the stream.
	ErrTooLarge = errors.New("wire: frame payload too large")
	// ErrChecksum: the CRC-32C of a frame does not match its header and
	// payload. Close the stream.
	ErrChecksum = errors.New("wire: frame checksum mismatch")
	// ErrShortFrame: the bytes end before the frame does. DecodeFrame returns
	// it when more bytes are needed; ReadFrame when the stream ended inside a
	// frame (then the error also matches io.ErrUnexpectedEOF).
	ErrShortFrame = errors.New("wire: short frame")
	// ErrUnknownType: a frame type this build does not know. The decoders do
	// not return it (see Type.Known); receivers use it to report such frames.
	ErrUnknownType = errors.New("wire: unknown frame type")
	// ErrMalformed: a message body (Decoder, DecodeRefusal, DecodeBusy) is
	// truncated, has trailing bytes, or holds an invalid value.
	ErrMalformed = errors.New("wire: malformed message")
	// ErrBusy: the receiver is busy; retry the same request later. Errors
	// from ReplyError for a Busy frame match it (see RetryAfterOf).
	ErrBusy = errors.New("wire: peer busy, retry later")
	// ErrRefused: the receiver refused the request. A *Refusal matches it;
	// RefusalCodeOf tells why.
	ErrRefused = errors.New("wire: request refused")
	// ErrNoRecord: a record store (dht, simnet) asked its peers and none
	// holds a value under the key. Any other error of a record lookup means
	// the records could not be asked (yet): a node that just started has no
	// route to them.
	ErrNoRecord = errors.New("wire: no record under the key")
	// ErrUnexpectedReply: a reply frame is not of type Ack, Busy or Refused.
	ErrUnexpectedReply = errors.New("wire: unexpected reply frame")
)
