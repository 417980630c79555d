package dht

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
)

// Records of a signed rule (RecordRule.Signed) carry their writer's peer ID
// and its libp2p signature between the version prefix and the payload:
//
//	version (8) | peer ID length (2) | peer ID | signature length (2) | signature | payload
//
// The signature covers signedDomain, the PutRecord key, the version and
// the payload, so it cannot be moved to another key or version. A node
// accepts such a value only if the writer is a member it lists or listed
// since it started (the record a lost coordinator wrote must stay readable
// for its successor) and the signature verifies with the key the peer ID
// embeds (Ed25519 identities embed their public key).

// signedDomain starts the bytes a record signature covers.
const signedDomain = "shufflenode record\x00"

// maxSignedField bounds an envelope's peer ID and signature lengths.
const maxSignedField = 1 << 10

// maxEnvelope bounds what a signature envelope adds to a stored value.
const maxEnvelope = 2 * (2 + maxSignedField)

// envelope is a signed record value, decoded.
type envelope struct {
	signer  peer.ID
	sig     []byte
	payload []byte
}

// sealRecord signs payload under user key with version and returns the
// stored value.
func sealRecord(key crypto.PrivKey, signer peer.ID, user string, version uint64, payload []byte) ([]byte, error) {
	sig, err := key.Sign(signedBytes(user, version, payload))
	if err != nil {
		return nil, fmt.Errorf("%w: signing record %s: %w", ErrRecord, user, err)
	}
	id := []byte(signer)
	v := binary.BigEndian.AppendUint64(make([]byte, 0, versionSize+4+len(id)+len(sig)+len(payload)), version)
	v = binary.BigEndian.AppendUint16(append(binary.BigEndian.AppendUint16(v, uint16(len(id))), id...), uint16(len(sig)))
	return append(append(v, sig...), payload...), nil
}

// signedBytes is what a record signature covers.
func signedBytes(user string, version uint64, payload []byte) []byte {
	b := append([]byte(signedDomain+user+"\x00"), make([]byte, 8)...)
	binary.BigEndian.PutUint64(b[len(b)-8:], version)
	return append(b, payload...)
}

// openEnvelope decodes the envelope after a stored value's version prefix.
func openEnvelope(user string, v []byte) (envelope, error) {
	var e envelope
	rest := v[versionSize:]
	id, rest, err := lengthPrefixed(rest)
	if err == nil {
		e.sig, e.payload, err = lengthPrefixed(rest)
	}
	if err != nil {
		return e, fmt.Errorf("%w: record %s: signature envelope: %w", ErrRecord, user, err)
	}
	if e.signer, err = peer.IDFromBytes(id); err != nil {
		return e, fmt.Errorf("%w: record %s: signer: %w", ErrRecord, user, err)
	}
	return e, nil
}

// lengthPrefixed splits b into a field of a 2-byte big-endian length and
// the rest.
func lengthPrefixed(b []byte) (field, rest []byte, err error) {
	if len(b) < 2 {
		return nil, nil, errors.New("truncated")
	}
	n := int(binary.BigEndian.Uint16(b))
	if n == 0 || n > maxSignedField || len(b) < 2+n {
		return nil, nil, fmt.Errorf("field of %d bytes in %d", n, len(b)-2)
	}
	return b[2 : 2+n], b[2+n:], nil
}

// verify checks that e was written by a member (isMember) and that its
// signature over user key and version verifies.
func (e envelope) verify(user string, version uint64, isMember func(peer.ID) bool) error {
	if isMember == nil || !isMember(e.signer) {
		return fmt.Errorf("%w: record %s: signer %s is not a member", ErrRecordSignature, user, e.signer)
	}
	pub, err := e.signer.ExtractPublicKey()
	if err != nil {
		return fmt.Errorf("%w: record %s: signer %s: no public key: %w", ErrRecordSignature, user, e.signer, err)
	}
	ok, err := pub.Verify(signedBytes(user, version, e.payload), e.sig)
	if err != nil || !ok {
		return fmt.Errorf("%w: record %s: signature of %s does not verify", ErrRecordSignature, user, e.signer)
	}
	return nil
}

// isSigner reports whether p may sign records: this node, or a member it
// lists or listed since it started.
func (n *Node) isSigner(p peer.ID) bool {
	if p == n.host.ID() {
		return true
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	_, ok := n.signers[p]
	return ok
}
