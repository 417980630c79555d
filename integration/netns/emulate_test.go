package netns

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// inNS runs f on a thread switched into h's namespace: the sockets f
// makes belong to that namespace for their whole life.
func inNS(h *Host, f func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	self, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(self)
	target, err := unix.Open("/var/run/netns/"+h.NS, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(target)
	if err := unix.Setns(target, unix.CLONE_NEWNET); err != nil {
		return err
	}
	ferr := f()
	if err := unix.Setns(self, unix.CLONE_NEWNET); err != nil {
		runtime.LockOSThread() // never hand this thread back: it stays in h's namespace
		return errors.Join(ferr, err)
	}
	return ferr
}

// echoPair listens on b's address (an echo server) and dials it from a.
func echoPair(t *testing.T, a, b *Host) net.Conn {
	t.Helper()
	var ln net.Listener
	step(t, inNS(b, func() (err error) { ln, err = net.Listen("tcp", b.Addr(0)); return err }))
	t.Cleanup(func() { ln.Close() })
	go func() {
		for c, err := ln.Accept(); err == nil; c, err = ln.Accept() {
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	var c net.Conn
	step(t, inNS(a, func() (err error) { c, err = net.DialTimeout("tcp", ln.Addr().String(), 10*time.Second); return err }))
	t.Cleanup(func() { c.Close() })
	return c
}

// minRTT is the shortest of n one-byte round trips over c.
func minRTT(t *testing.T, c net.Conn, n int) time.Duration {
	t.Helper()
	best := time.Hour
	b := []byte{1}
	for range n {
		start := time.Now()
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, b); err != nil {
			t.Fatal(err)
		}
		best = min(best, time.Since(start))
	}
	return best
}

// echo sends size random bytes over c and checks they all come back.
func echo(t *testing.T, c net.Conn, size int) time.Duration {
	t.Helper()
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(rand.Uint32())
	}
	start := time.Now()
	errc := make(chan error, 1)
	go func() { _, err := c.Write(data); errc <- err }()
	got := make([]byte, size)
	_ = c.SetReadDeadline(time.Now().Add(60 * time.Second))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatalf("echo of %d bytes: %v", size, err)
	}
	step(t, <-errc)
	if !bytes.Equal(got, data) {
		t.Fatal("echo came back different")
	}
	return time.Since(start)
}

// TestEmulatedLink shapes two hosts' links in the emulator and measures
// over a TCP echo between them: the round trip is at least the four link
// crossings' delay, 5% loss on each link still delivers every byte, and a
// rate bounds the throughput; Cut and Split stop the traffic between them.
func TestEmulatedLink(t *testing.T) {
	ctx := context.Background()
	nw := ForTest(t, 2)
	a, b := nw.Hosts[0], nw.Hosts[1]
	c := echoPair(t, a, b) // before the emulator: over the bridge
	plain := minRTT(t, c, 5)
	const delay = 10 * time.Millisecond
	if err := nw.CheckNetem(ctx); errors.Is(err, ErrNoNetem) {
		t.Skipf("skipped: %v", err)
	}
	for _, h := range nw.Hosts {
		step(t, h.Shape(ctx, Shape{Delay: delay}))
	}
	rtt := minRTT(t, c, 10)
	t.Logf("round trip a-b: %v plain, %v with %v on each link", plain, rtt, delay)
	if rtt < 4*delay-time.Millisecond {
		t.Errorf("round trip %v over two links of %v delay each: want at least %v", rtt, delay, 4*delay)
	}
	for _, h := range nw.Hosts {
		step(t, h.Shape(ctx, Shape{Delay: time.Millisecond, Jitter: time.Millisecond, Loss: 0.05}))
	}
	t.Logf("1 MiB echoed over 5%% loss per link in %v", echo(t, c, 1<<20))
	step(t, a.Shape(ctx, Shape{Rate: 4 << 20}))
	step(t, b.Unshape(ctx))
	took := echo(t, c, 1<<20)
	t.Logf("1 MiB echoed at 4 MiB/s in %v", took)
	if took < 200*time.Millisecond {
		t.Errorf("1 MiB each way at 4 MiB/s took %v: want at least 250 ms", took)
	}
	checkBlocked(t, c, func() error { return a.Cut(ctx) }, func() error { return a.Heal(ctx) })
	ab := [][]*Host{{a}, {b}}
	checkBlocked(t, c, func() error { return nw.Split(ctx, ab[0], ab[1]) }, func() error { return nw.Mend(ctx, ab[0], ab[1]) })
}

// checkBlocked checks that no echo crosses c after block, and that one
// does again after unblock.
func checkBlocked(t *testing.T, c net.Conn, block, unblock func() error) {
	t.Helper()
	step(t, block())
	_ = c.SetReadDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte{2}); err != nil {
		t.Fatal(err)
	}
	b := []byte{0}
	if _, err := io.ReadFull(c, b); err == nil {
		t.Fatal("an echo crossed a blocked path")
	}
	step(t, unblock())
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.ReadFull(c, b); err != nil || b[0] != 2 {
		t.Fatalf("no echo after unblocking: %v", err)
	}
}
