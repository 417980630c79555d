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
)

// MaxRecordSize is the largest value PutRecord stores.
const MaxRecordSize = 1 << 20

// versionSize is the size of the version prefix of a stored record.
const versionSize = 8

// recordValidator accepts any value of our namespace that carries a version
// prefix and is not too large, and selects the value with the highest
// version (ties: the greatest bytes), so every node picks the same one.
type recordValidator struct{}

// Validate checks a stored value's size and version prefix.
func (recordValidator) Validate(key string, value []byte) error {
	if len(value) < versionSize || len(value) > versionSize+MaxRecordSize {
		return fmt.Errorf("%w: record %s has %d bytes", ErrRecord, key, len(value))
	}
	return nil
}

// Select returns the index of the newest value.
func (recordValidator) Select(key string, values [][]byte) (int, error) {
	if len(values) == 0 {
		return 0, fmt.Errorf("%w: no values for record %s", ErrNotFound, key)
	}
	best := 0
	for i, v := range values[1:] {
		if newer(v, values[best]) {
			best = i + 1
		}
	}
	return best, nil
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
// DHT: locally and on the closest members. The newest put wins: values
// carry a version (this node's wall clock in nanoseconds, made strictly
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
	v := binary.BigEndian.AppendUint64(make([]byte, 0, versionSize+len(value)), n.nextVersion())
	err = n.kad.PutValue(ctx, k, append(v, value...))
	if errors.Is(err, kb.ErrLookupFailure) {
		n.log.Debug("record stored locally only", "key", key)
		return nil
	}
	if err != nil {
		return fmt.Errorf("dht: node %s: put record %s: %w", n.cfg.Name, key, err)
	}
	return nil
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
// node's own store included), or an error matching ErrNotFound. It asks the
// closest members and waits for the lookup to finish (bounded by ctx).
func (n *Node) GetRecord(ctx context.Context, key string) ([]byte, error) {
	k, err := recordKey(key)
	if err != nil {
		return nil, err
	}
	v, err := n.kad.GetValue(ctx, k)
	if errors.Is(err, routing.ErrNotFound) || errors.Is(err, kb.ErrLookupFailure) {
		return nil, fmt.Errorf("%w: record %s (node %s)", ErrNotFound, key, n.cfg.Name)
	}
	if err != nil {
		return nil, fmt.Errorf("dht: node %s: get record %s: %w", n.cfg.Name, key, err)
	}
	return v[versionSize:], nil
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
