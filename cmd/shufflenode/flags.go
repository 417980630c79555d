package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/shufflenode/shufflenode/job"
)

// byteSize is a flag value like 512MiB, 2GiB, 1e9 or 1048576.
type byteSize int64

func (b *byteSize) String() string { return job.FormatBytes(int64(*b)) }

func (b *byteSize) Set(s string) error {
	n, err := parseBytes(s)
	if err != nil {
		return err
	}
	*b = byteSize(n)
	return nil
}

var byteUnits = []struct {
	suffix string
	mult   float64
}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}}

// parseBytes parses a size with an optional binary or decimal unit.
func parseBytes(s string) (int64, error) {
	s = strings.TrimSpace(s)
	mult := 1.0
	for _, u := range byteUnits {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("invalid size %q (examples: 512MiB, 2GiB, 1e9)", s)
	}
	return int64(f * mult), nil
}

// newFlags returns a flag set that reports errors instead of exiting.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("shufflenode "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parse parses args; it returns the exit status to use when it fails.
func parse(fs *flag.FlagSet, args []string) (int, bool) {
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0, false
		}
		return 2, false
	}
	return 0, true
}

// newLogger logs text to stderr at the given level name.
func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))
}

// startCPUProfile writes a CPU profile to path until the returned func runs.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// writeHeapProfile writes the heap profile to path (errors are reported).
func writeHeapProfile(path string, stderr io.Writer) {
	f, err := os.Create(path)
	if err == nil {
		err = pprof.WriteHeapProfile(f)
		f.Close()
	}
	if err != nil {
		fmt.Fprintf(stderr, "heap profile: %v\n", err)
	}
}

// softMemoryLimit tells the Go runtime to collect harder as its memory nears the budget
// (bytes of shard data, which the splitter and the spill store keep to) plus overhead (the
// runtime, Arrow, gRPC, libp2p, badger and what a spill or a read holds for a moment), so
// the heap stays near the budget instead of growing to twice what is live. GOMEMLIMIT, when
// set, wins. Rows accumulated outside the Go heap (offheap) are part of the budget but not
// of the heap: the limit falls by what the arenas hold, so that heap and arenas together stay
// within budget + overhead (see followOffheap). It returns the limit it set, 0 if none.
func softMemoryLimit(budget, overhead int64) int64 {
	if os.Getenv("GOMEMLIMIT") != "" || budget <= 0 {
		return 0
	}
	debug.SetMemoryLimit(budget + overhead)
	return budget + overhead
}

// followOffheap sets the soft limit to limit less the arenas' bytes
// (mapped: the node's), every 100 ms, for the life of the process (never
// below a quarter of limit).
func followOffheap(limit int64, mapped func() int64) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	last := int64(0)
	for range t.C {
		if off := mapped(); off != last {
			debug.SetMemoryLimit(max(limit-off, limit/4))
			last = off
		}
	}
}
