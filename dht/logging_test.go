package dht

import (
	"log/slog"
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
