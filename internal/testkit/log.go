package testkit

import (
	"log/slog"
	"os"
)

// DebugEnv is the environment variable that turns Logger's debug output
// on (any non-empty value).
const DebugEnv = "SHUFFLENODE_TEST_DEBUG"

// Logger logs warnings and errors to stderr, and everything when DebugEnv
// is set.
func Logger() *slog.Logger {
	level := slog.LevelWarn
	if os.Getenv(DebugEnv) != "" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// Quiet logs nothing.
func Quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }
