package api

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"

	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc/credentials"
)

// Per-method message limits. gRPC's receive limit is one for the whole
// server, and it reads a message whole (granting the client flow-control
// window for all of it) as soon as its 5-byte prefix is under that limit:
// a check in a handler, an interceptor or the codec comes after the bytes
// are in memory. Only DoPut and DoExchange carry large messages (record
// batches); every other method takes a descriptor, a ticket, an action or
// a handshake, a few bytes. So each connection's incoming bytes pass
// through a scanner of the HTTP/2 frames (h2scan): it learns each stream's
// method from its headers (HPACK-decoded, as gRPC does, to keep the
// decoder's table in step) and reads the prefix of every message of a
// stream of a small method; one announcing more than the method's limit
// has its length rewritten, before gRPC reads it, to the largest length,
// which gRPC refuses without reading the message: the caller gets
// ResourceExhausted, "grpc: received message larger than max (4294967295
// vs. 268435456)" (gRPC writes that status itself, before any handler or
// interceptor could name the method's limit). The body never leaves the
// client's send window: at most one window (64 KiB per stream) arrives,
// and is discarded. A prefix that a read cuts in two is held back until
// the rest of its frame arrives; one split across two frames (no gRPC
// client does that) over the limit closes the connection.

// DefaultMaxCallMessage is the default of Limits.MaxCallMessage.
const DefaultMaxCallMessage = 4 << 20

// largeMethods are the Flight methods whose messages may be as large as
// flightproto.MaxMessageBytes: the streams of record batches a node
// receives.
var largeMethods = map[string]bool{
	"/arrow.flight.protocol.FlightService/DoPut":      true,
	"/arrow.flight.protocol.FlightService/DoExchange": true,
}

// Scanner bounds: header blocks are a few hundred bytes from any gRPC
// client; streams of small methods a client leaves open without ending
// its side are counted, and past maxTracked the connection is closed.
const (
	maxHeaderBlock = 1 << 20
	maxTracked     = 4096
	clientPreface  = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
	// hpackTable is the header table size gRPC's server decodes with (the
	// HTTP/2 default; it does not announce another).
	hpackTable = 4096
)

// HTTP/2 frame types and flags the scanner reads.
const (
	frameData         = 0x0
	frameHeaders      = 0x1
	frameRSTStream    = 0x3
	frameContinuation = 0x9

	flagEndStream  = 0x1
	flagEndHeaders = 0x4
	flagPadded     = 0x8
	flagPriority   = 0x20
)

// errScan is the error a connection's read returns when its bytes break
// the scanner's bounds (or HTTP/2): the connection closes.
var errScan = errors.New("api: connection closed")

// h2scan follows the client-to-server bytes of one HTTP/2 connection and
// enforces the small methods' message limit on them (see above). Not safe
// for concurrent use: a connection has one reader.
type h2scan struct {
	limit   uint32
	preface int // bytes of the client preface still to pass

	hdr  [9]byte // the frame header being read
	nhdr int
	// The current frame, once its header is read.
	inFrame    bool
	typ, flags byte
	sid        uint32
	left       int  // payload bytes still to come
	needPad    bool // PADDED: the pad length byte has not come yet
	prio       int  // HEADERS priority bytes still to skip
	pad        int  // padding bytes at the end of the payload

	block    []byte // the header block being gathered
	blockSID uint32
	blockEnd bool // the block's HEADERS ended the client's side
	dec      *hpack.Decoder
	path     string
	streams  map[uint32]*msgState // streams of small methods
}

// msgState is where a small method's stream stands in its messages.
type msgState struct {
	pre  [5]byte // a prefix split across reads
	npre int
	need uint64 // body bytes of the current message still to come
}

func newScan(limit uint32) *h2scan {
	s := &h2scan{limit: limit, preface: len(clientPreface), streams: map[uint32]*msgState{}}
	s.dec = hpack.NewDecoder(hpackTable, func(f hpack.HeaderField) {
		if f.Name == ":path" {
			s.path = f.Value
		}
	})
	s.dec.SetMaxStringLength(maxHeaderBlock)
	return s
}

// scan reads p, the next bytes from the client, and rewrites in place the
// length of any message over its method's limit. It returns how many bytes
// of p it read: fewer than len(p) (at most 4 short) when p ends inside a
// message prefix whose frame holds the rest; the caller hands those bytes
// on only after more came, and scans them again with them.
func (s *h2scan) scan(p []byte) (int, error) {
	total := len(p)
	for len(p) > 0 {
		switch {
		case s.preface > 0:
			k := min(s.preface, len(p))
			if string(p[:k]) != clientPreface[len(clientPreface)-s.preface:][:k] {
				return 0, fmt.Errorf("%w: not an HTTP/2 client preface", errScan)
			}
			s.preface -= k
			p = p[k:]
		case !s.inFrame:
			k := copy(s.hdr[s.nhdr:], p)
			s.nhdr += k
			p = p[k:]
			if s.nhdr == len(s.hdr) {
				if err := s.startFrame(); err != nil {
					return 0, err
				}
			}
		default:
			k, err := s.payload(p)
			if err != nil {
				return 0, err
			}
			if k == 0 {
				return total - len(p), nil
			}
			p = p[k:]
		}
		if s.inFrame && s.left == 0 {
			if err := s.endFrame(); err != nil {
				return 0, err
			}
		}
	}
	return total, nil
}

// startFrame takes the frame header just read.
func (s *h2scan) startFrame() error {
	h := s.hdr
	s.nhdr, s.inFrame = 0, true
	s.left = int(h[0])<<16 | int(h[1])<<8 | int(h[2])
	s.typ, s.flags = h[3], h[4]
	s.sid = binary.BigEndian.Uint32(h[5:]) & 0x7fffffff
	s.needPad = (s.typ == frameData || s.typ == frameHeaders) && s.flags&flagPadded != 0
	s.prio, s.pad = 0, 0
	if s.typ == frameHeaders && s.flags&flagPriority != 0 {
		s.prio = 5
	}
	switch s.typ {
	case frameHeaders:
		s.block, s.blockSID, s.blockEnd = s.block[:0], s.sid, s.flags&flagEndStream != 0
	case frameContinuation:
		if s.sid != s.blockSID {
			return fmt.Errorf("%w: CONTINUATION of another stream", errScan)
		}
	case frameRSTStream:
		delete(s.streams, s.sid)
	}
	return nil
}

// payload reads the start of p within the current frame's payload and
// returns how many bytes it read.
func (s *h2scan) payload(p []byte) (int, error) {
	p = p[:min(len(p), s.left)]
	switch {
	case s.needPad:
		s.needPad, s.pad = false, int(p[0])
		s.left--
		if s.pad+s.prio > s.left {
			return 0, fmt.Errorf("%w: padding longer than its frame", errScan)
		}
		return 1, nil
	case s.prio > 0:
		k := min(s.prio, len(p))
		s.prio -= k
		s.left -= k
		return k, nil
	case s.left <= s.pad: // the padding
		s.left -= len(p)
		return len(p), nil
	}
	body := p[:min(len(p), s.left-s.pad)]
	if st := s.streams[s.sid]; st != nil && s.typ == frameData {
		n, err := s.data(st, body, s.left-s.pad)
		s.left -= n
		return n, err
	}
	s.left -= len(body)
	switch s.typ {
	case frameHeaders, frameContinuation:
		if len(s.block)+len(body) > maxHeaderBlock {
			return 0, fmt.Errorf("%w: header block over %d bytes", errScan, maxHeaderBlock)
		}
		s.block = append(s.block, body...)
	}
	return len(body), nil
}

// endFrame ends the current frame: a complete header block names its
// stream's method; a frame that ends the client's side ends the stream.
func (s *h2scan) endFrame() error {
	s.inFrame = false
	switch s.typ {
	case frameHeaders, frameContinuation:
		if s.flags&flagEndHeaders == 0 {
			return nil
		}
		s.path = ""
		if _, err := s.dec.Write(s.block); err != nil {
			return fmt.Errorf("%w: headers: %w", errScan, err)
		}
		if err := s.dec.Close(); err != nil {
			return fmt.Errorf("%w: headers: %w", errScan, err)
		}
		_, open := s.streams[s.blockSID]
		switch {
		case s.blockEnd:
			delete(s.streams, s.blockSID)
		case s.path != "" && !open && !largeMethods[s.path]:
			if len(s.streams) >= maxTracked {
				return fmt.Errorf("%w: over %d calls left open", errScan, maxTracked)
			}
			s.streams[s.blockSID] = &msgState{}
		}
		if cap(s.block) > 64<<10 {
			s.block = nil
		}
	case frameData:
		if s.flags&flagEndStream != 0 {
			delete(s.streams, s.sid)
		}
	}
	return nil
}

// data reads body, DATA of a small method's stream of which rest bytes
// are left in the frame: the prefix of each message that starts in it,
// rewritten when the message is over the limit. It returns how many bytes
// it read: fewer when body ends inside a prefix that the frame completes.
func (s *h2scan) data(st *msgState, body []byte, rest int) (int, error) {
	n := len(body)
	for len(body) > 0 {
		if st.need > 0 {
			k := int(min(st.need, uint64(len(body))))
			st.need -= uint64(k)
			body, rest = body[k:], rest-k
			continue
		}
		if st.npre == 0 && len(body) < len(st.pre) && rest >= len(st.pre) {
			return n - len(body), nil // the read ends inside the prefix: hold it
		}
		if st.npre == 0 && len(body) >= len(st.pre) {
			m := binary.BigEndian.Uint32(body[1:5])
			if m > s.limit {
				binary.BigEndian.PutUint32(body[1:5], ^uint32(0))
			}
			st.need = uint64(m)
			body, rest = body[5:], rest-5
			continue
		}
		k := copy(st.pre[st.npre:], body)
		st.npre += k
		body, rest = body[k:], rest-k
		if st.npre < len(st.pre) {
			continue
		}
		st.npre = 0
		st.need = uint64(binary.BigEndian.Uint32(st.pre[1:]))
		if st.need > uint64(s.limit) {
			return 0, fmt.Errorf("%w: a message of %d bytes, over the %d a call other than DoPut and DoExchange may send, with its prefix split across frames", errScan, st.need, s.limit)
		}
	}
	return n, nil
}

// scanConn is a server connection whose incoming bytes pass through an
// h2scan.
type scanConn struct {
	net.Conn
	s    *h2scan
	held []byte // bytes read and not handed on yet (a cut prefix)
}

// Read reads from the connection and scans what it read; bytes the
// scanner refuses close the connection.
func (c *scanConn) Read(p []byte) (int, error) {
	if len(p) <= len(c.held) { // never: gRPC reads with large buffers
		c.Conn.Close()
		return 0, fmt.Errorf("%w: a read of %d bytes", errScan, len(p))
	}
	h := copy(p, c.held)
	n, err := c.Conn.Read(p[h:])
	n += h
	if n == 0 {
		return 0, err
	}
	done, serr := c.s.scan(p[:n])
	if serr != nil {
		c.Conn.Close()
		return 0, serr
	}
	if err != nil { // nothing more will come to complete a cut prefix
		c.held = nil
		return n, err
	}
	c.held = append(c.held[:0], p[done:n]...)
	return done, nil
}

// scanListener wraps every accepted connection in a scanConn (plaintext).
type scanListener struct {
	net.Listener
	limit uint32
}

func (l scanListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &scanConn{Conn: c, s: newScan(l.limit)}, nil
}

// scanCreds wraps the connections of TLS credentials after their
// handshake, so that the scanner reads the decrypted bytes.
type scanCreds struct {
	credentials.TransportCredentials
	limit uint32
}

func (c scanCreds) ServerHandshake(raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	conn, info, err := c.TransportCredentials.ServerHandshake(raw)
	if err != nil {
		return nil, nil, err
	}
	return &scanConn{Conn: conn, s: newScan(c.limit)}, info, nil
}

func (c scanCreds) Clone() credentials.TransportCredentials {
	return scanCreds{TransportCredentials: c.TransportCredentials.Clone(), limit: c.limit}
}
