package netns

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Shape is what a link does to the packets that cross it, in each
// direction (a Delay of 10 ms adds 20 ms to a round trip over this link; a
// packet between two shaped hosts crosses both links).
type Shape struct {
	// Delay is added to every packet; Jitter varies it uniformly by up to
	// +/- Jitter (so packets may overtake each other, as with netem).
	Delay, Jitter time.Duration
	// Loss is the fraction of packets dropped (0.01 is 1%).
	Loss float64
	// Rate limits the link to this many bytes per second (0: no limit).
	Rate int64
}

// emulated reports whether s needs the emulator: tc alone does rates only.
func (s Shape) emulated() bool { return s.Delay != 0 || s.Jitter != 0 || s.Loss != 0 }

// Shape applies s to both directions of h's link, replacing any shape
// before. A delay, jitter or loss starts the Net's link emulator (see
// emulate.go; ErrNoNetem if it cannot start), which from then on carries
// all traffic between hosts and applies every host's shape to it; traffic
// between a host and the test process is not delayed. A Rate is also set
// with tc tbf on the host's veth, which is all a rate alone needs before
// the emulator runs.
func (h *Host) Shape(ctx context.Context, s Shape) error {
	h.emu.setShape(h, s)
	if s.emulated() {
		if err := h.emu.start(ctx); err != nil {
			return fmt.Errorf("%w: %v", ErrNoNetem, err)
		}
	}
	if s.Rate == 0 {
		return h.resetQdisc(ctx)
	}
	args := tbf(s.Rate)
	return runAll(ctx, tcArgs(nil, h.Link, args), tcArgs(h.exec(), h.inner, args))
}

// Unshape removes h's link shape.
func (h *Host) Unshape(ctx context.Context) error {
	h.emu.setShape(h, Shape{})
	return h.resetQdisc(ctx)
}

// resetQdisc puts the default qdisc back on both ends of h's veth.
func (h *Host) resetQdisc(ctx context.Context) error {
	return runAll(ctx,
		[]string{"tc", "qdisc", "replace", "dev", h.Link, "root", "pfifo_fast"},
		h.exec("tc", "qdisc", "replace", "dev", h.inner, "root", "pfifo_fast"))
}

// tcArgs is "tc qdisc replace dev <dev> root <qdisc...>", after prefix.
func tcArgs(prefix []string, dev string, qdisc []string) []string {
	argv := append(append([]string(nil), prefix...), "tc", "qdisc", "replace", "dev", dev, "root")
	return append(argv, qdisc...)
}

// tbf returns tc's words for a rate limit.
func tbf(rate int64) []string {
	burst := max(rate/50, 16<<10) // 20 ms of the rate, at least 16 KiB
	return []string{"tbf", "rate", rateWord(rate), "burst", strconv.FormatInt(burst, 10), "latency", "200ms"}
}

// rateWord is a byte rate in tc's words ("bps" is bytes per second).
func rateWord(bytesPerSec int64) string { return strconv.FormatInt(bytesPerSec, 10) + "bps" }

// CheckNetem reports ErrNoNetem unless nw can emulate a delay, jitter and
// loss: it starts the link emulator (which needs /dev/net/tun), unshaped.
func (nw *Net) CheckNetem(ctx context.Context) error {
	if err := nw.emu.start(ctx); err != nil {
		return fmt.Errorf("%w: %v", ErrNoNetem, err)
	}
	return nil
}

// Cut takes h's link down: no packet reaches h or leaves it (a partition
// of h from every other host and from the test process) until Heal. The
// emulator drops h's packets too.
func (h *Host) Cut(ctx context.Context) error {
	h.emu.setCut(h, true)
	return run(ctx, "ip", "link", "set", h.Link, "down")
}

// Heal brings h's link back up.
func (h *Host) Heal(ctx context.Context) error {
	h.emu.setCut(h, false)
	return run(ctx, "ip", "link", "set", h.Link, "up")
}

// sweep removes the namespaces, links and bridges that networks of dead
// processes left behind (a run killed before Close). Errors are ignored:
// another run may be sweeping the same leftovers.
func sweep(ctx context.Context) {
	out, err := exec.CommandContext(ctx, "ip", "netns", "list").Output()
	if err != nil {
		return
	}
	for _, line := range strings.Split(string(out), "\n") {
		name, _, _ := strings.Cut(strings.TrimSpace(line), " ")
		k, pid, i, ok := parseNS(name)
		if !ok || processAlive(pid) {
			continue
		}
		_ = run(ctx, "ip", "link", "del", fmt.Sprintf("sn%dh%d", k, i))
		_ = run(ctx, "ip", "netns", "del", name)
		_ = run(ctx, "ip", "link", "del", fmt.Sprintf("sn%db", k))
	}
}

// parseNS parses "shufflenode-<K>-<pid>-<i>".
func parseNS(name string) (k, pid, i int, ok bool) {
	rest, found := strings.CutPrefix(name, nsPrefix)
	parts := strings.Split(rest, "-")
	if !found || len(parts) != 3 {
		return 0, 0, 0, false
	}
	var nums [3]int
	for j, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return 0, 0, 0, false
		}
		nums[j] = n
	}
	return nums[0], nums[1], nums[2], true
}

// processAlive reports whether a process with this ID exists.
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	return err == nil && p.Signal(syscall.Signal(0)) == nil
}
