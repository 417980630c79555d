package dht

import (
	"encoding/binary"
	"fmt"

	"github.com/hashicorp/memberlist"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
)

// metaVersion is byte 0 of the metadata encoding.
const metaVersion = 1

// flagLeaving is bit 0 of the flags byte.
const flagLeaving = 1

// metaFixed is the size of version, flags and boot nonce.
const metaFixed = 10

// meta is what a node tells the others about itself through memberlist's
// node metadata (at most memberlist.MetaMaxSize = 512 bytes).
//
// Encoding (version 1):
//
//	byte     version (1)
//	byte     flags: bit 0 = leaving (Leave was called); other bits must be 0
//	8 bytes  boot nonce, big endian: random per process start
//	uvarint  n, then n bytes: binary peer ID
//	uvarint  n, then n bytes: client-API address (UTF-8, may be empty)
//	repeated until the end: uvarint n, then n bytes: a binary multiaddr
type meta struct {
	// Boot changes on every start of the process: a member whose boot nonce
	// changes has restarted (lost its memory) even if memberlist did not see
	// it fail.
	Boot uint64
	// Leaving is set by Leave just before memberlist's leave message, so
	// the others can tell a graceful leave from a failure.
	Leaving bool
	PeerID  peer.ID
	APIAddr string
	Addrs   []ma.Multiaddr
}

// encode returns the metadata in at most limit bytes, dropping addresses
// from the end that do not fit. It fails if the fixed part does not fit or
// no address does.
func (m meta) encode(limit int) ([]byte, error) {
	b := []byte{metaVersion, 0}
	if m.Leaving {
		b[1] = flagLeaving
	}
	b = binary.BigEndian.AppendUint64(b, m.Boot)
	b = appendBytes(b, []byte(m.PeerID))
	b = appendBytes(b, []byte(m.APIAddr))
	if len(b) > limit {
		return nil, fmt.Errorf("%w: %d bytes without addresses, limit %d", ErrMeta, len(b), limit)
	}
	fixed := len(b)
	for _, a := range m.Addrs {
		if next := appendBytes(b, a.Bytes()); len(next) <= limit {
			b = next
		}
	}
	if len(m.Addrs) > 0 && len(b) == fixed {
		return nil, fmt.Errorf("%w: no address fits in %d bytes", ErrMeta, limit)
	}
	return b, nil
}

func appendBytes(b, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

// decodeMeta parses metadata received from another member. It checks
// every length against the bytes left and validates the peer ID and each
// address; errors match ErrMeta. It never panics.
func decodeMeta(b []byte) (meta, error) {
	var m meta
	if len(b) > memberlist.MetaMaxSize {
		return m, fmt.Errorf("%w: %d bytes, limit %d", ErrMeta, len(b), memberlist.MetaMaxSize)
	}
	if len(b) < metaFixed || b[0] != metaVersion || b[1]&^flagLeaving != 0 {
		return m, fmt.Errorf("%w: too short, unknown version or unknown flags", ErrMeta)
	}
	m.Leaving = b[1]&flagLeaving != 0
	m.Boot = binary.BigEndian.Uint64(b[2:metaFixed])
	r := metaReader{b: b[metaFixed:]}
	id, api := r.next(), r.next()
	if r.err != nil {
		return m, r.err
	}
	pid, err := peer.IDFromBytes(id)
	if err != nil {
		return m, fmt.Errorf("%w: peer ID: %v", ErrMeta, err)
	}
	m.PeerID, m.APIAddr = pid, string(api)
	m.Addrs, err = r.addrs()
	return m, err
}

// metaReader reads length-prefixed fields; the first error sticks.
type metaReader struct {
	b   []byte
	err error
}

func (r *metaReader) next() []byte {
	if r.err != nil {
		return nil
	}
	n, k := binary.Uvarint(r.b)
	if k <= 0 || n > uint64(len(r.b)-k) {
		r.err = fmt.Errorf("%w: bad field length", ErrMeta)
		return nil
	}
	v := r.b[k : k+int(n)]
	r.b = r.b[k+int(n):]
	return v
}

func (r *metaReader) addrs() ([]ma.Multiaddr, error) {
	var out []ma.Multiaddr
	for len(r.b) > 0 {
		raw := r.next()
		if r.err != nil {
			return nil, r.err
		}
		a, err := ma.NewMultiaddrBytes(raw)
		if err != nil {
			return nil, fmt.Errorf("%w: address: %v", ErrMeta, err)
		}
		out = append(out, a)
	}
	return out, nil
}
