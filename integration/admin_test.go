package integration

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/admin"
	"github.com/shufflenode/shufflenode/dht"
	"github.com/shufflenode/shufflenode/job"
	"github.com/shufflenode/shufflenode/node"
	"github.com/shufflenode/shufflenode/service"
)

// TestAdminEndpoints scrapes /metrics and /status of a node that ran a shuffle.
func TestAdminEndpoints(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	log := testLogger()
	nodes, err := node.StartLocal(ctx, 2, node.Config{AdminAddr: "127.0.0.1:0",
		Cluster: dht.Config{DataDir: t.TempDir(), Profile: "local", Logger: log},
		Service: service.Config{MemoryLimit: 64 << 20, Logger: log}, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer node.CloseAll(nodes)
	if _, err := job.RunDemo(ctx, apiAddrs(nodes), job.DemoConfig{ID: "adm", Rows: 5000, Tasks: 4, Partitions: 6}); err != nil {
		t.Fatal(err)
	}
	metrics := get(t, "http://"+nodes[0].Admin.Addr()+"/metrics")
	for _, want := range []string{`shufflenode_splitter_sent_bytes_total{node="node-0"}`, "shufflenode_spill_memory_limit_bytes",
		`shufflenode_dht_members{node="node-0"} 2`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(metrics, `shufflenode_splitter_sent_bytes_total{node="node-0"} 0`+"\n") {
		t.Error("no bytes sent after a shuffle")
	}
	var st admin.StatusReply
	if err := json.Unmarshal([]byte(get(t, "http://"+nodes[1].Admin.Addr()+"/status")), &st); err != nil {
		t.Fatal(err)
	}
	if st.Node != "node-1" || len(st.Members) != 2 {
		t.Errorf("/status = %+v", st)
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	return string(b)
}
