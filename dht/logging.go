package dht

import (
	"bytes"
	"context"
	"log"
	"log/slog"

	"github.com/libp2p/go-libp2p/gologshim"
)

// newMemberlistLogger returns a *log.Logger whose lines go to l at the
// level memberlist wrote in the line's "[LEVEL]" prefix. Once closing
// reports true (the node is shutting down), errors from writing to the
// node's own closed sockets (a probe in flight when memberlist's Shutdown
// closed its transport) go to Debug: they are the shutdown, not a fault.
func newMemberlistLogger(l *slog.Logger, closing func() bool) *log.Logger {
	return log.New(slogWriter{l: l.With("component", "memberlist"), closing: closing}, "", 0)
}

// slogWriter turns memberlist's "[LEVEL] memberlist: message" lines into
// slog records.
type slogWriter struct {
	l       *slog.Logger
	closing func() bool
}

// closedConn is how Go reports an operation on a socket its owner closed.
var closedConn = []byte("use of closed network connection")

// Write logs one line; it never fails.
func (w slogWriter) Write(p []byte) (int, error) {
	msg, level := parseLevel(bytes.TrimSpace(p))
	if level > slog.LevelDebug && w.closing != nil && bytes.Contains(msg, closedConn) && w.closing() {
		level = slog.LevelDebug
	}
	if w.l.Enabled(context.Background(), level) {
		w.l.Log(context.Background(), level, string(msg))
	}
	return len(p), nil
}

// parseLevel strips a "[LEVEL] memberlist: " prefix and returns the level
// it names (Info if none).
func parseLevel(line []byte) ([]byte, slog.Level) {
	level := slog.LevelInfo
	if rest, ok := bytes.CutPrefix(line, []byte("[")); ok {
		if name, msg, ok := bytes.Cut(rest, []byte("]")); ok {
			level = levelOf(string(name))
			line = bytes.TrimSpace(msg)
		}
	}
	line, _ = bytes.CutPrefix(line, []byte("memberlist: "))
	return line, level
}

// levelOf maps memberlist's level names to slog levels (Info if unknown).
func levelOf(name string) slog.Level {
	switch name {
	case "DEBUG", "TRACE":
		return slog.LevelDebug
	case "WARN":
		return slog.LevelWarn
	case "ERR", "ERROR":
		return slog.LevelError
	}
	return slog.LevelInfo
}

// SetLibp2pLogHandler routes go-libp2p's logs to h. go-libp2p's loggers
// are process-wide (package gologshim), so this affects every Node in the
// process and only takes effect for loggers that have not logged yet: call
// it once, early in main, before starting nodes. Tests and packages should
// not call it. kad-dht logs through go-log (GOLOG_LOG_LEVEL).
func SetLibp2pLogHandler(h slog.Handler) {
	gologshim.SetDefaultHandler(h)
}
