package admin_test

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/admin"
	"github.com/shufflenode/shufflenode/dht"
	"github.com/shufflenode/shufflenode/node"
	"github.com/shufflenode/shufflenode/service"
)

// TestAdminCutsOffSlowClients: a client that sends half a request, or
// keeps a connection open without asking anything, is cut off (the admin
// server once set only a header timeout: an idle connection stayed open
// for good).
func TestAdminCutsOffSlowClients(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	n, err := node.Start(ctx, node.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Cluster: dht.Config{Name: "slow", DataDir: t.TempDir(), Profile: dht.ProfileLocal},
		Service: service.Config{MemoryLimit: 64 << 20}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	const limit = 300 * time.Millisecond
	a, err := admin.Listen("127.0.0.1:0", admin.Source{Service: n.Service, Cluster: n.Cluster.Stats},
		admin.Options{IdleTimeout: limit, ReadTimeout: limit})
	if err != nil {
		t.Fatal(err)
	}
	a.Start()
	defer a.Close()
	for name, send := range map[string]string{
		"half a request":          "GET /status HTTP/1.1\r\nHost: x\r\n",
		"idle after one response": "GET /status HTTP/1.1\r\nHost: x\r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			c, err := net.Dial("tcp", a.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := io.WriteString(c, send); err != nil {
				t.Fatal(err)
			}
			r := bufio.NewReader(c)
			if resp, err := http.ReadResponse(r, nil); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			_ = c.SetReadDeadline(time.Now().Add(20 * limit))
			if _, err := r.ReadByte(); err != io.EOF {
				t.Fatalf("after %v the server has not closed the connection: %v", 20*limit, err)
			}
		})
	}
}
