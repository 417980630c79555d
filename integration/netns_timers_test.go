package integration

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/integration/netns"
)

// timerSets are the failure detector settings TestNetnsTimers compares:
// the lan profile's (serve's default: probe every 1 s, 500 ms timeout,
// suspicion multiplier 4), the local profile's (200 ms timeout, 3) and the
// faster ones docs/operations.md offers for quicker recovery.
var timerSets = []struct {
	name  string
	flags []string
}{
	{"profile lan", []string{"--profile", "lan"}},
	{"profile local", nil},
	{"fast", []string{"--probe-interval", "200ms", "--probe-timeout", "100ms", "--suspicion-mult", "2"}},
}

// timerShapes are the links TestNetnsTimers runs on (each host's link;
// between two hosts the delays add up, so the names give one way between
// two hosts): a LAN, a lossy one, and one whose round trip (100 ms) is the
// fast set's probe timeout.
var timerShapes = []struct {
	name  string
	shape netns.Shape
}{
	{"lan 1 ms, 0.1% loss", netns.Shape{Delay: 500 * time.Microsecond, Jitter: 250 * time.Microsecond, Loss: 0.001}},
	{"lossy 10 ms, 1% loss", netns.Shape{Delay: 5 * time.Millisecond, Jitter: 2 * time.Millisecond, Loss: 0.01}},
	{"far 50 ms, 2% loss", netns.Shape{Delay: 25 * time.Millisecond, Jitter: 10 * time.Millisecond, Loss: 0.02}},
}

// TestNetnsTimers measures false alarms of the failure detector: for each
// timer set and link shape it runs 4 serve processes in their own network
// namespaces and back-to-back demo shuffles for SHUFFLENODE_TIMERS seconds,
// then counts how often a live member was declared lost ("member lost" in
// the logs, every node's). Every shuffle must still be verified exactly
// once. It is a measurement of minutes, so it runs only when
// SHUFFLENODE_TIMERS is set; the counts are logged (go test -v).
func TestNetnsTimers(t *testing.T) {
	secs, err := strconv.Atoi(os.Getenv("SHUFFLENODE_TIMERS"))
	if err != nil || secs <= 0 {
		t.Skip("a measurement: set SHUFFLENODE_TIMERS=SECONDS per case to run it")
	}
	for _, ts := range timerSets {
		for _, sh := range timerShapes {
			t.Run(ts.name+"/"+sh.name, func(t *testing.T) {
				c := startNetnsWith(t, 4, ts.flags)
				for _, h := range c.net.Hosts {
					step(t, h.Shape(context.Background(), sh.shape))
				}
				runs, rows := demoFor(t, c, time.Duration(secs)*time.Second)
				lost, suspect := 0, 0
				for _, p := range c.procs {
					lost += logCount(t, p.log, "member lost")
					suspect += logCount(t, p.log, "Suspect ")
				}
				t.Logf("RESULT %s, %s: %d shuffles (%d rows each, verified) in %d s, %d false alarms (member lost), %d suspicions (refuted in time), summed over the 4 nodes",
					ts.name, sh.name, runs, rows, secs, lost, suspect)
				killed := time.Now()
				checkCounted(t, c, len(c.procs)-1)
				t.Logf("RESULT %s, %s: a node SIGKILLed was declared lost after %.1f s", ts.name, sh.name, time.Since(killed).Seconds())
			})
		}
	}
}

// demoFor runs verified demo shuffles on c back to back for d and returns
// how many ran and their rows.
func demoFor(t *testing.T, c *nsCluster, d time.Duration) (int, int64) {
	t.Helper()
	runs := 0
	cfg := procDemo("", 0)
	cfg.Rows = 1_000_000
	for end := time.Now().Add(d); time.Now().Before(end); runs++ {
		cfg.ID, cfg.Seed = fmt.Sprintf("timers-%d", runs), uint64(runs)
		if _, err := runDemo(t, c.apis(), cfg); err != nil {
			t.Fatalf("shuffle %d: %v", runs, err)
		}
	}
	return runs, cfg.Rows
}

// checkCounted kills node victim and waits until another node logs it
// lost: the count above would see a real loss (the test can fail).
func checkCounted(t *testing.T, c *nsCluster, victim int) {
	t.Helper()
	observer := c.procs[0]
	before := logCount(t, observer.log, "member lost")
	c.procs[victim].kill()
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if logCount(t, observer.log, "member lost") > before {
			return
		}
	}
	t.Fatalf("%s never logged \"member lost\" after %s was killed: the false alarm count cannot be trusted", observer.name, c.procs[victim].name)
}

// logCount counts the lines of the file at path that contain s.
func logCount(t *testing.T, path, s string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), s)
}
