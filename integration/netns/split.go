package netns

import (
	"context"
	"fmt"
)

// deadMAC is the link-layer address a split points the other side's
// addresses to: a locally administered address no interface has, so the
// bridge floods the frames and nobody takes them (a silent drop, as on a
// real partition: no error reaches the sender).
const deadMAC = "02:00:5e:00:de:ad"

// Split cuts every path between the hosts of a and those of b, both ways,
// and leaves every other path (within a side, and between any host and the
// test process) as it was: each host of a maps the addresses of b to
// deadMAC (a permanent neighbour entry), and the other way round, until
// Mend; the link emulator drops their packets too. A host may be in at
// most one side.
func (nw *Net) Split(ctx context.Context, a, b []*Host) error {
	nw.emu.setSplit(a, b, true)
	nw.emu.setSplit(b, a, true)
	if err := blind(ctx, a, b); err != nil {
		return err
	}
	return blind(ctx, b, a)
}

// Mend undoes Split(a, b): the hosts resolve each other's addresses again.
func (nw *Net) Mend(ctx context.Context, a, b []*Host) error {
	nw.emu.setSplit(a, b, false)
	nw.emu.setSplit(b, a, false)
	if err := see(ctx, a, b); err != nil {
		return err
	}
	return see(ctx, b, a)
}

// blind makes every host of from send its frames for the hosts of to
// nowhere.
func blind(ctx context.Context, from, to []*Host) error {
	for _, h := range from {
		for _, o := range to {
			argv := h.exec("ip", "neigh", "replace", o.IP, "lladdr", deadMAC, "nud", "permanent", "dev", h.inner)
			if err := run(ctx, argv...); err != nil {
				return fmt.Errorf("splitting %s from %s: %w", h.IP, o.IP, err)
			}
		}
	}
	return nil
}

// see removes blind's entries: the hosts of from resolve those of to by
// ARP again.
func see(ctx context.Context, from, to []*Host) error {
	for _, h := range from {
		for _, o := range to {
			err := ignoreMissing(run(ctx, h.exec("ip", "neigh", "del", o.IP, "dev", h.inner)...))
			if err != nil {
				return fmt.Errorf("mending %s and %s: %w", h.IP, o.IP, err)
			}
		}
	}
	return nil
}
