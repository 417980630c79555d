package dht

import (
	"crypto/rand"
	"errors"
	"testing"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
)

// signer is an Ed25519 identity for record tests.
type signer struct {
	key crypto.PrivKey
	id  peer.ID
}

func newSigner(t *testing.T) signer {
	t.Helper()
	k, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	id, err := peer.IDFromPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return signer{k, id}
}

func (s signer) seal(t *testing.T, user string, version uint64, payload string) []byte {
	t.Helper()
	v, err := sealRecord(s.key, s.id, user, version, []byte(payload))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// A signed rule takes only values a member signed for that key and
// version: a stranger's (forged) record, a tampered payload, a signature
// moved to another key or version, a missing envelope and an oversized
// value are refused.
func TestSignedRecords(t *testing.T) {
	member, stranger := newSigner(t), newSigner(t)
	rv := recordValidator{
		rules:    []RecordRule{{Prefix: "s/", Signed: true, Rank: func(_ string, v []byte) (uint64, error) { return uint64(len(v)), nil }}},
		isMember: func(p peer.ID) bool { return p == member.id },
	}
	good := member.seal(t, "s/a", 7, "payload")
	tampered := append([]byte(nil), good...)
	tampered[len(tampered)-1] ^= 1
	moved := append(versioned(8, ""), good[versionSize:]...)
	cases := []struct {
		name  string
		key   string
		value []byte
		want  error
	}{
		{"member", "s/a", good, nil},
		{"forged by a stranger", "s/a", stranger.seal(t, "s/a", 7, "payload"), ErrRecordSignature},
		{"stranger claims a member's ID", "s/a", withSigner(stranger.seal(t, "s/a", 7, "payload"), member.id), ErrRecordSignature},
		{"tampered payload", "s/a", tampered, ErrRecordSignature},
		{"other key", "s/b", good, ErrRecordSignature},
		{"other version", "s/a", moved, ErrRecordSignature},
		{"no envelope", "s/a", versioned(7, "payload"), ErrRecord},
		{"oversized", "s/a", member.seal(t, "s/a", 7, string(make([]byte, MaxRecordSize+maxEnvelope+1))), ErrRecord},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := rv.Validate("/"+recordNamespace+"/"+tc.key, tc.value)
			if (tc.want == nil) != (err == nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Fatalf("Validate: %v, want %v", err, tc.want)
			}
		})
	}
	if got, err := rv.Select("/"+recordNamespace+"/s/a", [][]byte{stranger.seal(t, "s/a", 9, "longer payload"), good}); err != nil || got != 1 {
		t.Fatalf("Select = %d, %v; want the member's value (1)", got, err)
	}
}

// withSigner replaces the peer ID in a sealed value (same length: both
// are Ed25519 identities).
func withSigner(v []byte, id peer.ID) []byte {
	out := append([]byte(nil), v...)
	copy(out[versionSize+2:], []byte(id))
	return out
}
