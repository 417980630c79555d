// Package wire is the byte format of messages between shufflenode peers:
// framing with a version, type, length and CRC-32C; the request/reply
// protocol's Busy and Refused payloads; and a small bounds-checked codec for
// message bodies. It is pure: no network or storage imports.
//
// # Frame layout
//
// A frame is a 12-byte header followed by the payload. All integers are
// little-endian.
//
//	byte  0     version: Version (1)
//	byte  1     Type
//	bytes 2-3   flags (uint16), reserved: writers send 0, readers ignore
//	bytes 4-7   payload length (uint32)
//	bytes 8-11  CRC-32C (Castagnoli) of header bytes 0..7 followed by the payload
//
// Decoders check, in this order: the version (ErrVersion), the length
// against the caller's limit before allocating or waiting for the payload
// (ErrTooLarge), that the whole frame is there (ErrShortFrame), and the
// checksum (ErrChecksum). Any of these except ErrShortFrame from DecodeFrame
// means the stream is out of sync or corrupt: close it.
//
// Unknown types are not a decoding error: the frame is intact, so the
// stream stays in sync. ReadFrame and DecodeFrame return it; the receiver
// checks Type.Known (or its own types) and answers a request it does not
// understand with a Refusal (RefuseUnsupported), logging ErrUnknownType.
// Types 1..15 are this package's, 16..63 are reserved for the shuffle
// service's message types.
//
// # Request and reply
//
// Every stream carries requests (TypeShards, TypeTaskEnd, TypeControl, or
// the service's own types) and each request is answered by exactly one reply
// frame on the same stream, in order:
//
//   - TypeAck: accepted. The payload is request-specific (often empty).
//   - TypeBusy: not taken, nothing happened; retry the same request after the
//     delay in the payload (EncodeBusy/DecodeBusy).
//   - TypeRefused: not taken, and retrying the same request will not help;
//     the payload (EncodeRefusal) carries a RefusalCode the sender acts on
//     and a reason for logs.
//
// ReplyError turns a reply frame into nil, a *BusyError (errors.Is ErrBusy)
// or a *Refusal (errors.Is ErrRefused; RefusalCodeOf gives the code).
//
// # Message bodies
//
// Encoder appends fields; Decoder reads them back with bounds checks and a
// sticky error (ErrMalformed), refusing any length above its limit or the
// bytes left, so a hostile body cannot cause a panic or a large allocation.
// Use Decoder.Count before allocating a slice from a decoded count.
//
// # Concurrency
//
// All functions are safe for concurrent use on distinct arguments. Encoder
// and Decoder values are not safe for concurrent use. Writing frames of one
// stream from several goroutines needs the caller's own lock.
package wire
