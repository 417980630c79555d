package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/shufflenode/shufflenode/api"
	"github.com/shufflenode/shufflenode/client"
	"github.com/shufflenode/shufflenode/job"
	"github.com/shufflenode/shufflenode/node"
	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/table"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestIdleShuffleExpires leaves one shuffle idle after a put while another
// is kept busy with barrier calls on every node: the idle one is closed on
// every member (its data freed, later calls told it expired), the busy one
// stays.
func TestIdleShuffleExpires(t *testing.T) {
	const expiry = 1500 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	nodes := startClusterWith(t, 3, service.Config{MemoryLimit: 64 << 20, IdleExpiry: expiry})
	clients := dialEach(t, nodes)
	for _, id := range []string{"idle", "busy"} {
		createAndPutOne(ctx, t, clients[0], id)
	}
	deadline := time.Now().Add(20 * expiry)
	for !expiredEverywhere(ctx, t, clients, "idle") {
		if time.Now().After(deadline) {
			t.Fatalf("shuffle idle for %s still open after %s", expiry, 20*expiry)
		}
		for _, c := range clients { // keeps "busy" active on every node
			if _, err := c.Barrier(ctx, "busy"); err != nil {
				t.Fatalf("barrier of the busy shuffle: %v", err)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	for i, n := range nodes {
		if _, err := clients[i].Status(ctx, "busy"); err != nil {
			t.Errorf("node %d: the busy shuffle: %v", i, err)
		}
		if _, ok := n.Service.Stats().Store.Shuffles["idle"]; ok {
			t.Errorf("node %d still holds data of the expired shuffle", i)
		}
	}
}

// expiredEverywhere reports whether every node answers NotFound for id,
// saying that it expired.
func expiredEverywhere(ctx context.Context, t *testing.T, clients []*client.Client, id string) bool {
	for i, c := range clients {
		_, err := c.Status(ctx, id)
		if err == nil {
			return false
		}
		if status.Code(err) != codes.NotFound || !strings.Contains(err.Error(), "expired after") {
			t.Fatalf("node %d: status of an idle shuffle: %v", i, err)
		}
	}
	return true
}

func dialEach(t *testing.T, nodes []*node.Node) []*client.Client {
	var cs []*client.Client
	for _, a := range apiAddrs(nodes) {
		c, err := client.Dial(a)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		cs = append(cs, c)
	}
	return cs
}

// createAndPutOne creates a 4-task demo shuffle id and puts its task 0.
func createAndPutOne(ctx context.Context, t *testing.T, c *client.Client, id string) {
	t.Helper()
	dc := job.DemoConfig{ID: id, Rows: 4000, Tasks: 4, Partitions: 8, PayloadBytes: 8}
	sp, err := dc.Spec()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, sp); err != nil {
		t.Fatal(err)
	}
	gen := table.GenConfig{Rows: dc.Rows, KeyCardinality: 1 << 40, PayloadBytes: 8}
	rec := table.GenTask(memory.DefaultAllocator, gen, 0, dc.Tasks)
	defer rec.Release()
	if _, err := c.Put(ctx, api.PutCmd{Shuffle: id, Task: 0}, table.GenSchema(), records(rec)); err != nil {
		t.Fatal(fmt.Errorf("put task 0 of %s: %w", id, err))
	}
}
