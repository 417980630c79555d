package dht

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	kb "github.com/libp2p/go-libp2p-kbucket"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/routing"

	"github.com/shufflenode/shufflenode/wire"
)

// MaxRecordSize is the largest value PutRecord stores.
const MaxRecordSize = 1 << 20

// versionSize is the size of the version prefix of a stored record.
const versionSize = 8

// RecordRule is a strict rule for the records whose keys start with
// Prefix (a PutRecord key, e.g. "shuffle/"): every node refuses to store a
// value Rank rejects, and of the values of one key it selects the one of
// the highest rank (ties: the newest version, then the greatest bytes).
type RecordRule struct {
	Prefix string
	// Rank checks value (without its version prefix) stored under key (the
	// PutRecord key) and ranks it. It must not block; any node calls it on
	// any value it is sent.
	Rank func(key string, value []byte) (uint64, error)
	// Signed values carry the writer's peer ID and its signature (see
	// signed.go); a node refuses a value not signed by a member, before
	// Rank sees it.
	Signed bool
}

// recordValidator accepts any value of our namespace that carries a version
// prefix, is not too large and passes the rule of its key, if any, and
// selects the value of the highest rank, then version (ties: the greatest
// bytes), so every node picks the same one. isMember says who may sign the
// values of signed rules (nil: nobody).
type recordValidator struct {
	rules    []RecordRule
	isMember func(peer.ID) bool
}

// Validate checks a stored value's size, version prefix and rule.
func (rv recordValidator) Validate(key string, value []byte) error {
	if len(value) < versionSize || len(value) > versionSize+rv.envelopeSize(key)+MaxRecordSize {
		return fmt.Errorf("%w: record %s has %d bytes", ErrRecord, key, len(value))
	}
	_, err := rv.rank(key, value)
	return err
}

// envelopeSize is the most a signature envelope adds to a value of key (a
// kad-dht key): maxEnvelope if its rule is signed, else 0.
func (rv recordValidator) envelopeSize(key string) int {
	if r, ok := rv.rule(strings.TrimPrefix(key, "/"+recordNamespace+"/")); ok && r.Signed {
		return maxEnvelope
	}
	return 0
}

// Select returns the index of the value of the highest rank, then the
// newest; values the key's rule rejects are never selected.
func (rv recordValidator) Select(key string, values [][]byte) (int, error) {
	best, bestRank := -1, uint64(0)
	for i, v := range values {
		r, err := rv.rank(key, v)
		if err == nil && (best < 0 || r > bestRank || (r == bestRank && newer(v, values[best]))) {
			best, bestRank = i, r
		}
	}
	if best < 0 {
		return 0, fmt.Errorf("%w: no valid values for record %s", ErrNotFound, key)
	}
	return best, nil
}

// rank applies the rule of key (a kad-dht key) to a stored value: 0 for a
// key without a rule.
func (rv recordValidator) rank(key string, value []byte) (uint64, error) {
	user := strings.TrimPrefix(key, "/"+recordNamespace+"/")
	r, ok := rv.rule(user)
	if !ok {
		return 0, nil
	}
	payload, err := rv.payload(r, user, value)
	if err != nil {
		return 0, err
	}
	n, err := r.Rank(user, payload)
	if err != nil {
		return 0, fmt.Errorf("%w: record %s: %w", ErrRecord, user, err)
	}
	return n, nil
}

// rule returns the rule of user key, if any.
func (rv recordValidator) rule(user string) (RecordRule, bool) {
	for _, r := range rv.rules {
		if strings.HasPrefix(user, r.Prefix) {
			return r, true
		}
	}
	return RecordRule{}, false
}

// payload returns the value a stored value of rule r carries, after
// checking its version prefix and, for a signed rule, its signature.
func (rv recordValidator) payload(r RecordRule, user string, value []byte) ([]byte, error) {
	if len(value) < versionSize {
		return nil, fmt.Errorf("%w: record %s has no version", ErrRecord, user)
	}
	if !r.Signed {
		return value[versionSize:], nil
	}
	e, err := openEnvelope(user, value)
	if err == nil {
		err = e.verify(user, recordVersion(value), rv.isMember)
	}
	return e.payload, err
}

// newer reports whether stored value a beats b.
func newer(a, b []byte) bool {
	va, vb := recordVersion(a), recordVersion(b)
	if va != vb {
		return va > vb
	}
	return bytes.Compare(a, b) > 0
}

func recordVersion(v []byte) uint64 {
	if len(v) < versionSize {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}

// recordKey maps a user key to the kad-dht key "/shufflenode/<key>".
func recordKey(key string) (string, error) {
	if key == "" || strings.ContainsRune(key, 0) {
		return "", fmt.Errorf("%w: record key %q", ErrRecord, key)
	}
	return "/" + recordNamespace + "/" + key, nil
}

// PutRecord stores value (at most MaxRecordSize bytes) under key in the
// DHT: locally and on the closest members. A key with a rule
// (Config.RecordRules) takes only values the rule accepts, and the value of
// the highest rank wins. Otherwise the newest put wins: values carry a
// version (this node's wall clock in nanoseconds, made strictly
// increasing per node), so concurrent writers on different nodes resolve
// by clock. With an empty routing table (a single-node cluster, or before
// any member is connected) the value is stored locally only, without
// error; other nodes still find it once they route to this node. Records
// expire after kad-dht's MaxRecordAge (36 h) unless put again.
func (n *Node) PutRecord(ctx context.Context, key string, value []byte) error {
	k, err := recordKey(key)
	if err != nil {
		return err
	}
	if len(value) > MaxRecordSize {
		return fmt.Errorf("%w: record %s has %d bytes, limit %d", ErrRecord, key, len(value), MaxRecordSize)
	}

	v, err := n.storedValue(key, value)
	if err != nil {
		return err
	}
	if _, err := n.validator().rank(k, v); err != nil {
		return fmt.Errorf("dht: node %s: put record: %w", n.cfg.Name, err)
	}
	err = n.kad.PutValue(ctx, k, v)
	if errors.Is(err, kb.ErrLookupFailure) {
		n.log.Debug("record stored locally only", "key", key)
		return nil
	}
	if err != nil {
		return fmt.Errorf("dht: node %s: put record %s: %w", n.cfg.Name, key, err)
	}
	return nil
}

// validator is this node's record validator.
func (n *Node) validator() recordValidator {
	return recordValidator{rules: n.cfg.RecordRules, isMember: n.isSigner}
}

// storedValue is what PutRecord stores for value under user key: a new
// version, then the value, signed by this node if its key's rule says so.
func (n *Node) storedValue(key string, value []byte) ([]byte, error) {
	version := n.nextVersion()
	if r, ok := n.validator().rule(key); ok && r.Signed {
		return sealRecord(n.host.Peerstore().PrivKey(n.host.ID()), n.host.ID(), key, version, value)
	}
	v := binary.BigEndian.AppendUint64(make([]byte, 0, versionSize+len(value)), version)
	return append(v, value...), nil
}

// nextVersion returns max(now, last+1) in Unix nanoseconds.
func (n *Node) nextVersion() uint64 {
	now := uint64(time.Now().UnixNano())
	for {
		last := n.recordVersion.Load()
		v := max(now, last+1)
		if n.recordVersion.CompareAndSwap(last, v) {
			return v
		}
	}
}

// GetRecord returns the newest value stored under key by any member (this
// node's own store included), or an error matching ErrNotFound and
// wire.ErrNoRecord when the lookup asked every member it knows. It asks the
// closest members and waits for the lookup to finish (bounded by ctx); while
// its routing table holds fewer peers than the members it knows (it just
// started) a lookup that finds nothing returns ErrTransport instead.
func (n *Node) GetRecord(ctx context.Context, key string) ([]byte, error) {
	k, err := recordKey(key)
	if err != nil {
		return nil, err
	}
	v, err := n.kad.GetValue(ctx, k)
	if errors.Is(err, routing.ErrNotFound) || errors.Is(err, kb.ErrLookupFailure) {
		if s := n.Stats(); s.RoutingTablePeers < s.Members-1 {
			// A node that just (re)started knows members its routing table
			// does not hold yet: the lookup did not ask them.
			return nil, fmt.Errorf("%w: node %s: get record %s: the routing table holds %d of the %d other members yet",
				ErrTransport, n.cfg.Name, key, s.RoutingTablePeers, s.Members-1)
		}
		return nil, fmt.Errorf("%w: %w: record %s (node %s)", ErrNotFound, wire.ErrNoRecord, key, n.cfg.Name)
	}
	if err != nil {
		return nil, fmt.Errorf("dht: node %s: get record %s: %w", n.cfg.Name, key, err)
	}
	return n.payloadOf(key, v)
}

// payloadOf is the value a stored value under user key carries.
func (n *Node) payloadOf(key string, v []byte) ([]byte, error) {
	rv := n.validator()
	r, ok := rv.rule(key)
	if !ok {
		return v[versionSize:], nil
	}
	p, err := rv.payload(r, key, v)
	if err != nil {
		return nil, fmt.Errorf("dht: node %s: get record %s: %w", n.cfg.Name, key, err)
	}
	return p, nil
}

// FindPeer returns the libp2p addresses of a peer ID: from the member list
// if the peer is a member, else from a kad-dht lookup. It returns an error
// matching ErrNotFound if nobody knows the peer.
func (n *Node) FindPeer(ctx context.Context, peerID string) ([]string, error) {
	id, err := peer.Decode(peerID)
	if err != nil {
		return nil, fmt.Errorf("%w: peer ID %q: %v", ErrConfig, peerID, err)
	}
	if m := n.memberByPeer(id); m.Name != "" {
		return m.Addrs, nil
	}
	info, err := n.kad.FindPeer(ctx, id)
	if errors.Is(err, routing.ErrNotFound) || errors.Is(err, kb.ErrLookupFailure) || (err == nil && len(info.Addrs) == 0) {
		return nil, fmt.Errorf("%w: peer %s (node %s)", ErrNotFound, peerID, n.cfg.Name)
	}
	if err != nil {
		return nil, fmt.Errorf("dht: node %s: find peer %s: %w", n.cfg.Name, peerID, err)
	}
	return addrStrings(info.Addrs), nil
}
