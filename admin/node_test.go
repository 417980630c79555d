package admin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/shufflenode/shufflenode/admin"
	"github.com/shufflenode/shufflenode/dht"
	"github.com/shufflenode/shufflenode/internal/testkit"
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
	log := testkit.Quiet()
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
		`shufflenode_service_ops_waiting{` + node + `} 0`,
		`shufflenode_service_op_memory_limit_bytes{` + node + `} `,
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
	next := oneRecord(rec)
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

// TestStatusBytesOut seals a shuffle on one node, reads every partition
// twice and checks that /status and the page count what the reads handed
// out, and that /metrics has the same figure.
func TestStatusBytesOut(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n, err := node.Start(ctx, node.Config{AdminAddr: "127.0.0.1:0", Logger: testkit.Quiet(),
		Cluster: dht.Config{Name: "n0", DataDir: t.TempDir(), Profile: dht.ProfileLocal},
		Service: service.Config{MemoryLimit: 64 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	putOneTask(ctx, t, n.Service, "out-1")
	for task := uint64(1); task < 4; task++ {
		putTask(ctx, t, n.Service, "out-1", task, 4)
	}
	if b, err := n.Service.Barrier(ctx, "out-1"); err != nil || !b.Sealed {
		t.Fatalf("barrier: %+v, %v", b, err)
	}
	var rows, bytes int64
	for range 2 {
		for p := range 3 {
			err := n.Service.Get(ctx, "out-1", p, func(rec arrow.Record) error {
				rows, bytes = rows+rec.NumRows(), bytes+table.RecordBytes(rec)
				rec.Release()
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	var st admin.StatusReply
	if err := json.Unmarshal([]byte(get(t, "http://"+n.Admin.Addr()+"/status")), &st); err != nil || len(st.Shuffles) != 1 {
		t.Fatalf("/status: %+v, %v", st, err)
	}
	if s := st.Shuffles[0]; s.RowsOut != 200 || rows != 200 || s.BytesOut != bytes || s.Reads != 6 {
		t.Errorf("/status: %d reads, %d rows, %d bytes out; want 6 reads, 200 rows, %d bytes (read %d rows)", s.Reads, s.RowsOut, s.BytesOut, bytes, rows)
	}
	if page := get(t, "http://"+n.Admin.Addr()+"/"); !strings.Contains(page, `<td class="n">6, 200 rows, `) {
		t.Errorf("the page lacks the reads out of the node:\n%s", page)
	}
	want := fmt.Sprintf(`shufflenode_receiver_shuffle_read_bytes{node="n0",shuffle="out-1"} %d`, bytes)
	if m := get(t, "http://"+n.Admin.Addr()+"/metrics"); !strings.Contains(m, want) {
		t.Errorf("/metrics lacks %q", want)
	}
}

// putTask puts task of the demo shuffle id (of tasks tasks, 100 rows).
func putTask(ctx context.Context, t *testing.T, svc *service.Service, id string, task uint64, tasks int) {
	t.Helper()
	rec := table.GenTask(nil, table.GenConfig{Rows: 100}, int(task), tasks)
	defer rec.Release()
	next := oneRecord(rec)
	if _, err := svc.Put(ctx, id, task, 0, rec.Schema(), next); err != nil {
		t.Fatal(err)
	}
}

// oneRecord yields rec once, then io.EOF: a put stream of one batch.
func oneRecord(rec arrow.Record) func() (arrow.Record, error) {
	sent := false
	return func() (arrow.Record, error) {
		if sent {
			return nil, io.EOF
		}
		sent = true
		return rec, nil
	}
}
