package netns

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// answers reports whether h gets an answer from addr (a connection, or
// a refusal: something is there) within 2 s, as opposed to silence or a
// local error.
func answers(h *Host, addr string) bool {
	cmd := h.Command("timeout", "2", "bash", "-c", fmt.Sprintf("exec 3<>/dev/tcp/%s", strings.Replace(addr, ":", "/", 1)))
	out, err := cmd.CombinedOutput()
	return err == nil || strings.Contains(string(out), "refused")
}

// waitAnswer polls answers for 10 s (links coming up take a moment).
func waitAnswer(h *Host, addr string) bool {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if answers(h, addr) {
			return true
		}
	}
	return false
}

// TestSplitMend splits 4 hosts 2/2 and checks that each side reaches its
// own side and the test process but not the other side, and that Mend
// brings the paths back.
func TestSplitMend(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("needs bash")
	}
	ctx := context.Background()
	nw := ForTest(t, 4)
	a, b := nw.Hosts[:2], nw.Hosts[2:]
	port := func(h *Host) string { return h.Addr(9) } // nothing listens: a refusal is the answer
	for _, h := range nw.Hosts[1:] {
		if !waitAnswer(nw.Hosts[0], port(h)) {
			t.Fatalf("%s never reaches %s", nw.Hosts[0].IP, h.IP)
		}
	}
	step(t, nw.Split(ctx, a, b))
	checks := []struct {
		from, to *Host
		want     bool
	}{{a[0], a[1], true}, {b[1], b[0], true}, {a[0], b[0], false}, {b[1], a[1], false}}
	for _, c := range checks {
		if got := answers(c.from, port(c.to)); got != c.want {
			t.Errorf("split: %s reaches %s: %v, want %v", c.from.IP, c.to.IP, got, c.want)
		}
	}
	if !answers(b[0], nw.Gateway+":9") {
		t.Errorf("split: %s does not reach the test process", b[0].IP)
	}
	step(t, nw.Mend(ctx, a, b))
	if !waitAnswer(a[0], port(b[0])) || !waitAnswer(b[1], port(a[1])) {
		t.Error("after Mend the sides still do not reach each other")
	}
}
