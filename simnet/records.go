package simnet

import (
	"context"
	"fmt"

	"github.com/shufflenode/shufflenode/wire"
)

// Records: every node of the network shares one in-memory record store, the
// stand-in for kad-dht's (dht.Node.PutRecord and GetRecord). A key with a
// rule (Config.RecordRank) takes only values the rule accepts and keeps the
// one of the highest rank; otherwise the last put wins.

// PutRecord stores value under key for every node.
func (n *Node) PutRecord(_ context.Context, key string, value []byte) error {
	nw := n.net
	var rank uint64
	if nw.cfg.RecordRank != nil {
		r, err := nw.cfg.RecordRank(key, value)
		if err != nil {
			return fmt.Errorf("simnet: node %s: put record %s: %w", n.self.Name, key, err)
		}
		rank = r
	}
	nw.mu.Lock()
	defer nw.mu.Unlock()
	if nw.records == nil {
		nw.records = map[string]record{}
	}
	if old, ok := nw.records[key]; !ok || rank >= old.rank {
		nw.records[key] = record{rank: rank, value: clone(value)}
	}
	return nil
}

// GetRecord returns the value stored under key, or an error wrapping
// ErrNotFound and wire.ErrNoRecord.
func (n *Node) GetRecord(_ context.Context, key string) ([]byte, error) {
	nw := n.net
	nw.mu.Lock()
	defer nw.mu.Unlock()
	r, ok := nw.records[key]
	if !ok {
		return nil, fmt.Errorf("%w: %w: record %s (node %s)", ErrNotFound, wire.ErrNoRecord, key, n.self.Name)
	}
	return clone(r.value), nil
}

// record is one stored value and its rank.
type record struct {
	rank  uint64
	value []byte
}
