package api

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/service"
)

// readDoc returns docs/flight-api.md.
func readDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", "flight-api.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// statedInt returns the integer the document states where re's first group
// matches ("2^k" is 2 to the k).
func statedInt(t *testing.T, doc, re string) int {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(doc)
	if m == nil {
		t.Fatalf("docs/flight-api.md no longer states %s", re)
	}
	if k, ok := strings.CutPrefix(m[1], "2^"); ok {
		n, err := strconv.Atoi(k)
		if err != nil {
			t.Fatal(err)
		}
		return 1 << n
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestDocStatements checks the figures docs/flight-api.md gives against
// the code: its revision, the node caps' defaults, the connection limits.
func TestDocStatements(t *testing.T) {
	doc := readDoc(t)
	for _, c := range []struct {
		what string
		re   string
		want int
	}{
		{"revision", `(?m)^# .*protocol version \d+ \(revision (\d+)\)`, flightproto.ProtocolRevision},
		{"--max-tasks", "\\| `--max-tasks` \\(`max_tasks`\\) \\| (2\\^\\d+)", service.DefaultMaxTasks},
		{"--max-partitions", "\\| `--max-partitions` \\(`max_partitions`\\) \\| (2\\^\\d+)", service.DefaultMaxPartitions},
		{"--max-shuffles", "\\| `--max-shuffles` \\(`max_shuffles`\\) \\| (\\d+)", service.DefaultMaxShuffles},
		{"connections", `\| connections to one node \| (\d+) at once`, DefaultMaxConnections},
		{"streams", `\| calls on one connection \| (\d+) at once`, DefaultMaxStreams},
		{"idle minutes", `\| idle connection \| closed \(GOAWAY\) after (\d+) min`, int(DefaultIdleTimeout / time.Minute)},
		{"handshake seconds", `\| connection start \| TLS and HTTP/2 set up within (\d+) s`, int(DefaultHandshakeTimeout / time.Second)},
		{"keepalive seconds", `silent for (\d+) min`, int(keepaliveTime / time.Minute)},
		{"keepalive answer", `without an answer in (\d+) s`, int(keepaliveTimeout / time.Second)},
		{"client pings", `accepts client pings at most every (\d+) s`, int(minClientPing / time.Second)},
	} {
		if got := statedInt(t, doc, c.re); got != c.want {
			t.Errorf("docs/flight-api.md: %s %d, the code %d", c.what, got, c.want)
		}
	}
	if !strings.Contains(doc, fmt.Sprintf("- **%d** (", flightproto.ProtocolRevision)) {
		t.Errorf("docs/flight-api.md lists no revision %d under Revisions", flightproto.ProtocolRevision)
	}
	row := regexp.MustCompile("(?m)^\\| `ResourceExhausted` \\|.*$").FindString(doc)
	for _, flag := range []string{"--max-tasks", "--max-partitions", "--max-shuffles"} {
		if !strings.Contains(row, flag) {
			t.Errorf("the code table's ResourceExhausted row does not name %s: %q", flag, row)
		}
	}
}
