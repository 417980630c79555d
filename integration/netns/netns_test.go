package netns

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"testing"
	"time"
)

// dialFrom connects from inside h's namespace to addr with bash's
// /dev/tcp and reports whether that worked within 3 s.
func dialFrom(h *Host, addr string) error {
	host, port, _ := net.SplitHostPort(addr)
	cmd := h.Command("timeout", "3", "bash", "-c", fmt.Sprintf("exec 3<>/dev/tcp/%s/%s", host, port))
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v: %s", err, out)
	}
	return nil
}

// TestNetReachCutHeal checks that a host reaches the test process through
// the bridge, not once its link is cut, and again once healed; and that
// Close removes the namespaces.
func TestNetReachCutHeal(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("needs bash")
	}
	ctx := context.Background()
	nw := ForTest(t, 2)
	ln, err := net.Listen("tcp", nw.Gateway+":0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for c, err := ln.Accept(); err == nil; c, err = ln.Accept() {
			c.Close()
		}
	}()
	h := nw.Hosts[1]
	if err := dialFrom(h, ln.Addr().String()); err != nil {
		t.Fatalf("%s cannot reach the test process: %v", h.IP, err)
	}
	step(t, h.Cut(ctx))
	if err := dialFrom(h, ln.Addr().String()); err == nil {
		t.Fatalf("%s reached the test process through a cut link", h.IP)
	}
	step(t, h.Heal(ctx))
	waitReach(t, h, ln.Addr().String())
	step(t, nw.Close())
	if err := exec.Command("ip", "netns", "exec", h.NS, "true").Run(); err == nil {
		t.Errorf("namespace %s still exists after Close", h.NS)
	}
}

func step(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// waitReach retries dialFrom for 10 s (a link coming up takes a moment).
func waitReach(t *testing.T, h *Host, addr string) {
	t.Helper()
	var err error
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if err = dialFrom(h, addr); err == nil {
			return
		}
	}
	t.Fatalf("%s does not reach the test process after Heal: %v", h.IP, err)
}

// TestShapeRateAndNetem shapes a link with a rate alone (tbf, always
// there) and with a delay (the emulator, skipped without TUN devices).
func TestShapeRateAndNetem(t *testing.T) {
	ctx := context.Background()
	nw := ForTest(t, 1)
	h := nw.Hosts[0]
	step(t, h.Shape(ctx, Shape{Rate: 1 << 20}))
	step(t, h.Unshape(ctx))
	err := h.Shape(ctx, Shape{Delay: 5 * time.Millisecond, Jitter: time.Millisecond, Loss: 0.01})
	if errors.Is(err, ErrNoNetem) {
		if nw.CheckNetem(ctx) == nil {
			t.Fatal("Shape says no netem, CheckNetem says netem")
		}
		t.Skipf("emulated part skipped: %v", err)
	}
	step(t, err)
}

// TestParseNS checks the namespace names sweep recognises.
func TestParseNS(t *testing.T) {
	for name, want := range map[string]bool{
		"shufflenode-3-1234-0": true, "shufflenode-3-1234": false, "other-3-1234-0": false, "shufflenode-a-1-2": false,
	} {
		if _, _, _, ok := parseNS(name); ok != want {
			t.Errorf("parseNS(%q) ok = %v, want %v", name, ok, want)
		}
	}
}
