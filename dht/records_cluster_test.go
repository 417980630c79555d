package dht_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/shufflenode/shufflenode/dht"
	"github.com/shufflenode/shufflenode/dht/dhttest"
)

func TestRecordsAcrossNodes(t *testing.T) {
	nodes := dhttest.StartCluster(t, 3, nil, ackHandler)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	steps := []struct {
		name      string
		put, get  int
		key, want string
	}{
		{"put on 0, get on 2", 0, 2, "spec/s1", "v1"},
		{"newer put on 1 wins on 0", 1, 0, "spec/s1", "v2"},
		{"newest on its own node", 2, 2, "moved/s1/7", "node-2"},
		{"and on another", -1, 1, "moved/s1/7", "node-2"},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if st.put >= 0 {
				if err := nodes[st.put].PutRecord(ctx, st.key, []byte(st.want)); err != nil {
					t.Fatal(err)
				}
			}
			got, err := nodes[st.get].GetRecord(ctx, st.key)
			if err != nil || string(got) != st.want {
				t.Fatalf("GetRecord = %q, %v; want %q", got, err, st.want)
			}
		})
	}
	if _, err := nodes[1].GetRecord(ctx, "spec/none"); !errors.Is(err, dht.ErrNotFound) {
		t.Fatalf("missing record: %v, want ErrNotFound", err)
	}
	if err := nodes[0].PutRecord(ctx, "", []byte("x")); !errors.Is(err, dht.ErrRecord) {
		t.Fatalf("empty key: %v, want ErrRecord", err)
	}
}

func TestRecordsOnSingleNodeStayLocal(t *testing.T) {
	nodes := dhttest.StartCluster(t, 1, nil, ackHandler)
	ctx := context.Background()
	if err := nodes[0].PutRecord(ctx, "spec/s1", []byte("alone")); err != nil {
		t.Fatal(err)
	}
	if got, err := nodes[0].GetRecord(ctx, "spec/s1"); err != nil || string(got) != "alone" {
		t.Fatalf("GetRecord = %q, %v", got, err)
	}
}

func TestFindPeer(t *testing.T) {
	nodes := dhttest.StartCluster(t, 3, nil, ackHandler)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	self := nodes[2].Self()
	addrs, err := nodes[0].FindPeer(ctx, self.PeerID)
	if err != nil || !slices.Equal(addrs, self.Addrs) {
		t.Fatalf("FindPeer(node-2) = %v, %v; want %v", addrs, err, self.Addrs)
	}
	_, pub, _ := crypto.GenerateEd25519Key(rand.Reader)
	stranger, _ := peer.IDFromPublicKey(pub)
	if _, err := nodes[0].FindPeer(ctx, stranger.String()); !errors.Is(err, dht.ErrNotFound) {
		t.Fatalf("FindPeer(stranger): %v, want ErrNotFound", err)
	}
}

// A record rule holds on every node, signed or not: a value it rejects is
// refused at the put, and a lower-ranked put after a higher one (an error,
// where the putting node already holds the higher) replaces it on no node.
func TestRecordRulesAcrossNodes(t *testing.T) {
	for _, signed := range []bool{false, true} {
		t.Run(fmt.Sprintf("signed %v", signed), func(t *testing.T) { recordRulesAcrossNodes(t, signed) })
	}
}

func recordRulesAcrossNodes(t *testing.T, signed bool) {
	rule := dht.RecordRule{Prefix: "ranked/", Signed: signed, Rank: func(_ string, v []byte) (uint64, error) {
		if len(v) == 0 || v[0] < '0' || v[0] > '9' {
			return 0, errors.New("not a ranked value")
		}
		return uint64(v[0] - '0'), nil
	}}
	nodes := dhttest.StartCluster(t, 3, func(_ int, c *dht.Config) { c.RecordRules = []dht.RecordRule{rule} }, ackHandler)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := nodes[0].PutRecord(ctx, "ranked/s", []byte("x")); !errors.Is(err, dht.ErrRecord) {
		t.Fatalf("put of a value the rule rejects: %v, want ErrRecord", err)
	}
	if err := nodes[0].PutRecord(ctx, "ranked/s", []byte("5 high")); err != nil {
		t.Fatal(err)
	}
	_ = nodes[1].PutRecord(ctx, "ranked/s", []byte("2 later but lower"))
	for i, n := range nodes {
		if got, err := n.GetRecord(ctx, "ranked/s"); err != nil || string(got) != "5 high" {
			t.Errorf("node %d: GetRecord = %q, %v; want the higher rank", i, got, err)
		}
	}
}
