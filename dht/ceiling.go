package dht

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"
)

// ceilingProtocol is the sink protocol of StreamCeiling's own two hosts.
const ceilingProtocol = "/shufflenode/ceiling/1"

// ceilingChunk is the size of each write of StreamCeiling.
const ceilingChunk = 1 << 20

// StreamCeiling measures the fastest a node could move bytes to a peer on
// this machine: it starts two libp2p hosts on 127.0.0.1 as nodes build them
// (TCP, TLS 1.3, yamux, no network key), opens one stream between them and
// writes bytes over it in 1 MiB writes to a receiver that discards them.
// The time runs from the first write until the receiver has counted every
// byte. The hosts are closed before it returns.
func StreamCeiling(ctx context.Context, bytes int64) (time.Duration, error) {
	hosts, err := ceilingHosts()
	if err != nil {
		return 0, err
	}
	defer func() {
		for _, h := range hosts {
			_ = h.Close()
		}
	}()
	hosts[1].SetStreamHandler(ceilingProtocol, ceilingSink)
	if err := hosts[0].Connect(ctx, peer.AddrInfo{ID: hosts[1].ID(), Addrs: hosts[1].Addrs()}); err != nil {
		return 0, fmt.Errorf("dht: ceiling: connect: %w", err)
	}
	s, err := hosts[0].NewStream(ctx, hosts[1].ID(), ceilingProtocol)
	if err != nil {
		return 0, fmt.Errorf("dht: ceiling: stream: %w", err)
	}
	defer s.Reset()
	return ceilingSend(s, bytes)
}

// ceilingHosts starts the two hosts.
func ceilingHosts() ([]host.Host, error) {
	var hosts []host.Host
	for i := range 2 {
		key, err := generateKey()
		if err == nil {
			var h host.Host
			h, err = newHost(Config{Name: fmt.Sprintf("ceiling-%d", i), ListenAddrs: DefaultConfig().ListenAddrs}.withDefaults(), key, nil)
			hosts = append(hosts, h)
		}
		if err != nil {
			for _, h := range hosts[:len(hosts)-1] {
				_ = h.Close()
			}
			return nil, err
		}
	}
	return hosts, nil
}

// ceilingSend writes bytes to s, half-closes it and waits for the sink's
// count.
func ceilingSend(s network.Stream, bytes int64) (time.Duration, error) {
	buf := make([]byte, ceilingChunk)
	start := time.Now()
	for left := bytes; left > 0; left -= int64(len(buf)) {
		if _, err := s.Write(buf[:min(left, int64(len(buf)))]); err != nil {
			return 0, fmt.Errorf("dht: ceiling: write: %w", err)
		}
	}
	if err := s.CloseWrite(); err != nil {
		return 0, fmt.Errorf("dht: ceiling: close: %w", err)
	}
	var got [8]byte
	if _, err := io.ReadFull(s, got[:]); err != nil {
		return 0, fmt.Errorf("dht: ceiling: reply: %w", err)
	}
	d := time.Since(start)
	if n := int64(binary.BigEndian.Uint64(got[:])); n != bytes {
		return d, fmt.Errorf("dht: ceiling: sink counted %d bytes, sent %d", n, bytes)
	}
	return d, nil
}

// ceilingSink reads the stream to its end and writes the count back.
func ceilingSink(s network.Stream) {
	defer s.Close()
	buf := make([]byte, ceilingChunk)
	var n uint64
	for {
		k, err := s.Read(buf)
		n += uint64(k)
		if err != nil {
			break
		}
	}
	_, _ = s.Write(binary.BigEndian.AppendUint64(nil, n))
}
