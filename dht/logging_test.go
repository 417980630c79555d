package dht

import (
	"bytes"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
)

func TestParseLevel(t *testing.T) {
	cases := []struct {
		name, line, msg string
		level           slog.Level
	}{
		{"debug", "[DEBUG] memberlist: Stream connection from=1.2.3.4", "Stream connection from=1.2.3.4", slog.LevelDebug},
		{"warn", "[WARN] memberlist: Refuting a dead message", "Refuting a dead message", slog.LevelWarn},
		{"err", "[ERR] memberlist: Failed to send", "Failed to send", slog.LevelError},
		{"no prefix", "plain line", "plain line", slog.LevelInfo},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			msg, level := parseLevel([]byte(tc.line))
			if string(msg) != tc.msg || level != tc.level {
				t.Fatalf("parseLevel = %q, %v; want %q, %v", msg, level, tc.msg, tc.level)
			}
		})
	}
}

// TestClosedSocketErrorsWhileClosing: memberlist's errors about the node's
// own closed sockets are Debug once the node is closing, and stay errors
// before; other errors stay errors.
func TestClosedSocketErrorsWhileClosing(t *testing.T) {
	var buf bytes.Buffer
	var closing atomic.Bool
	l := newMemberlistLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})), closing.Load)
	const closed = "[ERR] memberlist: Failed to send indirect UDP ping: write udp 127.0.0.1:1->127.0.0.1:2: use of closed network connection"
	l.Print(closed)
	closing.Store(true)
	l.Print(closed)
	l.Print("[ERR] memberlist: Failed to send gossip to 127.0.0.1:2: connection refused")
	out := buf.String()
	if n := strings.Count(out, "use of closed network connection"); n != 1 {
		t.Errorf("the closed-socket error logged %d times at Info or above, want once (before closing):\n%s", n, out)
	}
	if !strings.Contains(out, "connection refused") {
		t.Errorf("another error while closing was not logged:\n%s", out)
	}
}
