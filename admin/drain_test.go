package admin_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/admin"
	"github.com/shufflenode/shufflenode/dht"
	"github.com/shufflenode/shufflenode/node"
	"github.com/shufflenode/shufflenode/service"
)

// TestAdminDrain: POST /drain on a real node answers 202 and signals the
// drain to the process (Service.DrainRequested); GET /drain is refused.
func TestAdminDrain(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	n, err := node.Start(ctx, node.Config{AdminAddr: "127.0.0.1:0", Logger: log,
		Cluster: dht.Config{Name: "n0", DataDir: t.TempDir(), Profile: dht.ProfileLocal},
		Service: service.Config{MemoryLimit: 64 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	base := "http://" + n.Admin.Addr()
	r, err := http.Get(base + "/drain")
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /drain: %s, want 405", r.Status)
	}
	select {
	case <-n.Service.DrainRequested():
		t.Fatal("drain requested before POST /drain")
	default:
	}
	r, err = http.Post(base+"/drain", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var rep admin.DrainReply
	if err := json.NewDecoder(r.Body).Decode(&rep); err != nil {
		t.Fatal(err)
	}
	if r.StatusCode != http.StatusAccepted || rep.Node != "n0" || !rep.Draining {
		t.Fatalf("POST /drain: %s %+v", r.Status, rep)
	}
	select {
	case <-n.Service.DrainRequested():
	case <-time.After(5 * time.Second):
		t.Fatal("POST /drain did not request the drain")
	}
}
