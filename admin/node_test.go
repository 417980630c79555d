package admin_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/shufflenode/shufflenode/dht"
	"github.com/shufflenode/shufflenode/job"
	"github.com/shufflenode/shufflenode/node"
	"github.com/shufflenode/shufflenode/service"
	"github.com/shufflenode/shufflenode/table"
)

// TestAdminOnNode runs one real node whose name holds HTML, creates a
// shuffle, puts one of its four tasks, and reads the status page and the
// metrics.
func TestAdminOnNode(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const name = `<b>n"0&`
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	n, err := node.Start(ctx, node.Config{AdminAddr: "127.0.0.1:0", Logger: log,
		Cluster: dht.Config{Name: name, DataDir: t.TempDir(), Profile: dht.ProfileLocal},
		Service: service.Config{MemoryLimit: 64 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	putOneTask(ctx, t, n.Service, "pg-1")
	base := "http://" + n.Admin.Addr()
	r, err := http.Get(base + "/debug/pprof/")
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusNotFound {
		t.Fatalf("/debug/pprof/ without AdminPprof: %s, want 404", r.Status)
	}

	page := get(t, base+"/")
	for _, want := range []string{"<h1>shufflenode &lt;b&gt;n&#34;0&amp;</h1>", "<td>pg-1</td>",
		`<td class="open">open</td>`, "1 / 4, ", "25 rows, ", "Members (1)"} {
		if !strings.Contains(page, want) {
			t.Errorf("/ lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "<b>") {
		t.Error("/ shows the node name unescaped")
	}
	if get(t, base+"/ui") == "" {
		t.Error("/ui is empty")
	}

	metrics := get(t, base+"/metrics")
	node := `node="<b>n\"0&"`
	for _, want := range []string{
		`shufflenode_service_shuffles_by_phase{` + node + `,phase="open"} 1`,
		`shufflenode_service_shuffles_by_phase{` + node + `,phase="sealed"} 0`,
		`shufflenode_barrier_shuffle_tasks{` + node + `,shuffle="pg-1"} 4`,
		`shufflenode_barrier_shuffle_tasks_done{` + node + `,shuffle="pg-1"} 1`,
		`shufflenode_barrier_shuffle_sent_rows{` + node + `,shuffle="pg-1"} 25`,
		`shufflenode_barrier_shuffle_epoch{` + node + `,shuffle="pg-1"} 0`,
		`shufflenode_spill_shuffle_memory_pieces{` + node + `,shuffle="pg-1"}`,
		`shufflenode_splitter_entries_total{` + node + `}`,
		`shufflenode_dht_busy_total{` + node + `} 0`,
		`shufflenode_service_takeovers_total{` + node + `} 0`,
		`shufflenode_service_last_takeover_seconds{` + node + `} 0`,
		`shufflenode_barrier_shuffle_replayed_tasks{` + node + `,shuffle="pg-1"} 0`,
		`shufflenode_barrier_shuffle_seal_seconds{` + node + `,shuffle="pg-1"} 0`,
		`shufflenode_dht_peer_requests_sent_total{` + node + `,peer="<b>n\"0&"} `,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// putOneTask creates shuffle id (4 tasks of 25 rows, 3 partitions) and puts
// task 0.
func putOneTask(ctx context.Context, t *testing.T, svc *service.Service, id string) {
	t.Helper()
	dc := job.DemoConfig{ID: id, Rows: 100, Tasks: 4, Partitions: 3}
	sp, err := dc.Spec()
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Create(ctx, sp); err != nil {
		t.Fatal(err)
	}
	rec := table.GenTask(nil, table.GenConfig{Rows: dc.Rows}, 0, dc.Tasks)
	defer rec.Release()
	sent := false
	next := func() (arrow.Record, error) {
		if sent {
			return nil, io.EOF
		}
		sent = true
		return rec, nil
	}
	if _, err := svc.Put(ctx, id, 0, 0, rec.Schema(), next); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %v", url, resp.Status, err)
	}
	return string(b)
}
