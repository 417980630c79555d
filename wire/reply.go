package wire

import (
	"errors"
	"fmt"
	"math"
	"time"
	"unicode/utf8"
)

// RefusalCode says why a receiver refused a request. Codes are part of the
// wire format: never renumber them. Codes 1..63 belong to this package,
// 64..1023 to the shuffle service; a receiver may send a code the sender does
// not know, which the sender must treat like RefuseFailed.
type RefusalCode uint16

// Refusal codes.
const (
	// RefuseUnknownShuffle: the receiver has no shuffle of that ID (never
	// created there, or already closed or expired).
	RefuseUnknownShuffle RefusalCode = 1 + iota
	// RefuseStaleEpoch: the request names an older ownership epoch; fetch the
	// current map and resend what now goes elsewhere.
	RefuseStaleEpoch
	// RefuseSealed: the shuffle (or its epoch) is sealed; no data is accepted.
	RefuseSealed
	// RefuseBadRequest: the request could not be decoded or is invalid; a
	// retry of the same bytes will fail again.
	RefuseBadRequest
	// RefuseFailed: the receiver failed the shuffle or hit an internal error.
	RefuseFailed
	// RefuseNotOwner: the request is for an output partition the receiver
	// does not own in the named epoch.
	RefuseNotOwner
	// RefuseUnsupported: the frame type or message version is unknown to the
	// receiver.
	RefuseUnsupported
	// RefuseClosing: the receiver is shutting down; it will not take the
	// request, now or later.
	RefuseClosing
	// RefuseNotSealed: an output was asked for before the shuffle's barrier;
	// ask again after it.
	RefuseNotSealed
)

// String returns the code's name, or "code(N)" for an unknown code.
func (c RefusalCode) String() string {
	names := [...]string{"", "unknown shuffle", "stale epoch", "sealed", "bad request",
		"failed", "not owner", "unsupported", "closing", "not sealed"}
	if c >= 1 && int(c) < len(names) {
		return names[c]
	}
	return fmt.Sprintf("code(%d)", uint16(c))
}

// MaxReasonLen is the longest reason EncodeRefusal sends; longer reasons are
// cut at a UTF-8 boundary.
const MaxReasonLen = 1024

// Refusal is the payload of a TypeRefused frame, and the error a sender gets
// for it. errors.Is(r, ErrRefused) is true.
type Refusal struct {
	// Code says why; senders act on it.
	Code RefusalCode
	// Reason is human-readable detail for logs (shuffle, epoch, ...).
	Reason string
}

// Error implements error.
func (r *Refusal) Error() string {
	if r.Reason == "" {
		return fmt.Sprintf("wire: request refused (%s)", r.Code)
	}
	return fmt.Sprintf("wire: request refused (%s): %s", r.Code, r.Reason)
}

// Is makes errors.Is(r, ErrRefused) true.
func (r *Refusal) Is(target error) bool { return target == ErrRefused }

// EncodeRefusal returns the payload of a TypeRefused frame: the code as a
// uvarint, then the reason (at most MaxReasonLen bytes) length-prefixed.
func EncodeRefusal(r Refusal) []byte {
	var e Encoder
	e.Uvarint(uint64(r.Code))
	e.String(truncateUTF8(r.Reason, MaxReasonLen))
	return e.Bytes()
}

// DecodeRefusal decodes a TypeRefused payload. Errors match ErrMalformed.
func DecodeRefusal(b []byte) (Refusal, error) {
	d := NewDecoder(b, MaxReasonLen)
	code := d.Uvarint()
	reason := d.String()
	if err := d.Done(); err != nil {
		return Refusal{}, fmt.Errorf("refusal: %w", err)
	}
	if code > math.MaxUint16 {
		return Refusal{}, fmt.Errorf("%w: refusal code %d", ErrMalformed, code)
	}
	return Refusal{Code: RefusalCode(code), Reason: reason}, nil
}

// RefusalCodeOf returns the code of the *Refusal in err's chain, if any.
func RefusalCodeOf(err error) (RefusalCode, bool) {
	var r *Refusal
	if errors.As(err, &r) {
		return r.Code, true
	}
	return 0, false
}

// truncateUTF8 cuts s to at most n bytes without splitting a rune.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// BusyError is the error a sender gets for a TypeBusy reply. It matches
// ErrBusy.
type BusyError struct {
	// RetryAfter is how long the receiver asks the sender to wait.
	RetryAfter time.Duration
}

// Error implements error.
func (e *BusyError) Error() string {
	return fmt.Sprintf("wire: peer busy, retry after %s", e.RetryAfter)
}

// Is makes errors.Is(e, ErrBusy) true.
func (e *BusyError) Is(target error) bool { return target == ErrBusy }

// EncodeBusy returns the payload of a TypeBusy frame: the retry-after delay
// in milliseconds as a little-endian uint32, rounded up, clamped to
// [0, MaxUint32] ms.
func EncodeBusy(d time.Duration) []byte {
	ms := d / time.Millisecond
	if d%time.Millisecond > 0 {
		ms++ // round up without overflowing
	}
	ms = max(0, min(ms, math.MaxUint32))
	var e Encoder
	e.Uint32(uint32(ms))
	return e.Bytes()
}

// DecodeBusy decodes a TypeBusy payload. Errors match ErrMalformed.
func DecodeBusy(b []byte) (time.Duration, error) {
	d := NewDecoder(b, 0)
	ms := d.Uint32()
	if err := d.Done(); err != nil {
		return 0, fmt.Errorf("busy: %w", err)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// RetryAfterOf returns the delay of the *BusyError in err's chain, if any.
func RetryAfterOf(err error) (time.Duration, bool) {
	var b *BusyError
	if errors.As(err, &b) {
		return b.RetryAfter, true
	}
	return 0, false
}

// ReplyError interprets a reply frame: nil for TypeAck, a *BusyError for
// TypeBusy, a *Refusal for TypeRefused, and an error matching
// ErrUnexpectedReply (or ErrMalformed for a bad payload) otherwise.
func ReplyError(f Frame) error {
	switch f.Type {
	case TypeAck:
		return nil
	case TypeBusy:
		d, err := DecodeBusy(f.Payload)
		if err != nil {
			return err
		}
		return &BusyError{RetryAfter: d}
	case TypeRefused:
		r, err := DecodeRefusal(f.Payload)
		if err != nil {
			return err
		}
		return &r
	default:
		return fmt.Errorf("%w: %s", ErrUnexpectedReply, f.Type)
	}
}
