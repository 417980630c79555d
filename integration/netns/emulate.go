package netns

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// The link emulator: delay, jitter, loss and rate between hosts in user
// space, on every kernel (tc netem is often missing). Once started, each
// host has a TUN device (sn<K>t<i>, MTU tunMTU) and routes every other
// host's /32 through it; the test process reads each packet from the
// sender's TUN and writes it, shaped, to the TUN of the host owning its
// destination: a small switch. The veths and the bridge still carry the
// traffic between the hosts and the test process (unshaped but for a
// Rate, which tbf applies there too).

// tunMTU is the TUNs' MTU: large, so that the switch sees few packets.
const tunMTU = 65000

// emulator is a Net's switch. Its zero value holds shapes, cuts and
// splits without forwarding anything; start makes it carry the traffic.
type emulator struct {
	mu      sync.Mutex
	running bool
	closed  bool
	ports   map[[4]byte]*port // by host address
	split   map[[2]*Host]bool // blocked (from, to) pairs
	rng     *rand.Rand
	readers sync.WaitGroup
}

// port is one host's side of the switch.
type port struct {
	h       *Host
	f       *os.File // the host's TUN; nil until started
	shape   Shape
	cut     bool
	out, in lane // the host's link, leaving it and reaching it
}

// lane is one direction of a link: when its rate lets the next packet go.
type lane struct{ busy time.Time }

func newEmulator() *emulator {
	return &emulator{ports: map[[4]byte]*port{}, split: map[[2]*Host]bool{},
		rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(os.Getpid())))}
}

// add registers h (before start).
func (e *emulator) add(h *Host) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ports[ipKey(h.IP)] = &port{h: h}
}

// ipKey is the 4 bytes of a dotted IPv4 address (the Net makes them).
func ipKey(ip string) [4]byte { return netip.MustParseAddr(ip).As4() }

// port returns h's port.
func (e *emulator) port(h *Host) *port { return e.ports[ipKey(h.IP)] }

// setShape records h's shape; it applies to the packets read from now on.
func (e *emulator) setShape(h *Host, s Shape) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.port(h).shape = s
}

// setCut makes the switch drop (or pass again) every packet from or to h.
func (e *emulator) setCut(h *Host, cut bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.port(h).cut = cut
}

// setSplit blocks (or unblocks) the packets from each host of a to each of b.
func (e *emulator) setSplit(a, b []*Host, blocked bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, x := range a {
		for _, y := range b {
			if blocked {
				e.split[[2]*Host{x, y}] = true
			} else {
				delete(e.split, [2]*Host{x, y})
			}
		}
	}
}

// start gives every host its TUN and routes and starts forwarding, once.
func (e *emulator) start(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.running || e.closed {
		return nil
	}
	for _, p := range e.ports {
		if err := e.plug(ctx, p); err != nil {
			e.unplug()
			return err
		}
	}
	e.running = true
	for _, p := range e.ports {
		e.readers.Add(1)
		go e.read(p)
	}
	return nil
}

// plug opens p's TUN in the root namespace, moves it into the host's and
// routes the other hosts through it.
func (e *emulator) plug(ctx context.Context, p *port) error {
	f, err := openTUN(p.h.tun)
	if err != nil {
		return err
	}
	p.f = f
	cmds := [][]string{{"ip", "link", "set", p.h.tun, "netns", p.h.NS},
		p.h.exec("ip", "link", "set", p.h.tun, "mtu", fmt.Sprint(tunMTU), "up")}
	for _, o := range e.ports {
		if o != p {
			cmds = append(cmds, p.h.exec("ip", "route", "replace", o.h.IP+"/32", "dev", p.h.tun, "src", p.h.IP))
		}
	}
	return runAll(ctx, cmds...)
}

// unplug closes the TUNs a failed start opened (which removes them and
// their routes), so that start may be tried again.
func (e *emulator) unplug() {
	for _, p := range e.ports {
		if p.f != nil {
			_ = p.f.Close()
			p.f = nil
		}
	}
}

// openTUN makes the TUN device name (IPv4 packets, no header) and returns
// its file, in non-blocking mode so that Close ends a pending Read.
func openTUN(name string) (*os.File, error) {
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("opening /dev/net/tun: %w", err)
	}
	ifr, err := unix.NewIfreq(name)
	if err == nil {
		ifr.SetUint16(unix.IFF_TUN | unix.IFF_NO_PI)
		err = unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr)
	}
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("creating TUN %s: %w", name, err)
	}
	return os.NewFile(uintptr(fd), name), nil
}

// read forwards the packets of p's TUN until it is closed.
func (e *emulator) read(p *port) {
	defer e.readers.Done()
	buf := make([]byte, tunMTU+1024)
	for {
		n, err := p.f.Read(buf)
		if err != nil {
			return
		}
		if to, at, ok := e.route(p, buf[:n], time.Now()); ok {
			pkt := bytes.Clone(buf[:n])
			time.AfterFunc(time.Until(at), func() { _, _ = to.f.Write(pkt) })
		}
	}
}

// route returns the port a packet read from p at now goes to and when it
// arrives there, or false if it is dropped (not IPv4, unknown
// destination, cut, split, lost, or over a rate's queue).
func (e *emulator) route(p *port, pkt []byte, now time.Time) (*port, time.Time, bool) {
	if len(pkt) < 20 || pkt[0]>>4 != 4 {
		return nil, now, false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	to := e.ports[[4]byte(pkt[16:20])]
	if to == nil || e.closed || p.cut || to.cut || e.split[[2]*Host{p.h, to.h}] {
		return nil, now, false
	}
	at, ok := p.out.pass(p.shape, e.rng, now, len(pkt))
	if ok {
		at, ok = to.in.pass(to.shape, e.rng, at, len(pkt))
	}
	return to, at, ok
}

// pass returns when a packet of n bytes entering l at t leaves it under
// shape s, or false if s loses it or its rate's queue is full.
func (l *lane) pass(s Shape, rng *rand.Rand, t time.Time, n int) (time.Time, bool) {
	if s.Loss > 0 && rng.Float64() < s.Loss {
		return t, false
	}
	if s.Rate > 0 {
		begin := later(t, l.busy)
		if begin.Sub(t) > queueTime(s.Rate) {
			return t, false
		}
		l.busy = begin.Add(time.Duration(int64(n) * int64(time.Second) / s.Rate))
		t = l.busy
	}
	return t.Add(s.delay(rng)), true
}

// queueTime bounds a rate's queue: what it sends in 200 ms, and at least
// 256 KiB (four full packets), as tbf's latency bounds its queue.
func queueTime(rate int64) time.Duration {
	return max(200*time.Millisecond, time.Duration((256<<10)*int64(time.Second)/rate))
}

// delay is Delay varied uniformly by up to +/- Jitter, never negative.
func (s Shape) delay(rng *rand.Rand) time.Duration {
	d := s.Delay
	if s.Jitter > 0 {
		d += time.Duration(rng.Int64N(int64(2*s.Jitter)+1)) - s.Jitter
	}
	return max(d, 0)
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// close stops forwarding and closes the TUNs (which removes them).
func (e *emulator) close() error {
	e.mu.Lock()
	e.closed = true
	var files []*os.File
	for _, p := range e.ports {
		if p.f != nil {
			files = append(files, p.f)
		}
	}
	e.mu.Unlock()
	for _, f := range files {
		_ = f.Close()
	}
	e.readers.Wait()
	return nil
}
