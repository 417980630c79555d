package dht

import (
	"bytes"
	"crypto/rand"
	"errors"
	"strings"
	"testing"

	"github.com/hashicorp/memberlist"
	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"
)

func testPeerID(tb testing.TB) peer.ID {
	tb.Helper()
	_, pub, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	id, err := peer.IDFromPublicKey(pub)
	if err != nil {
		tb.Fatal(err)
	}
	return id
}

func testAddrs(tb testing.TB, ss ...string) []ma.Multiaddr {
	tb.Helper()
	out := make([]ma.Multiaddr, len(ss))
	for i, s := range ss {
		out[i] = ma.StringCast(s)
	}
	return out
}

func sampleMeta(tb testing.TB) meta {
	return meta{
		Boot: 0x0102030405060708, PeerID: testPeerID(tb), APIAddr: "10.0.0.7:8815",
		Addrs: testAddrs(tb, "/ip4/10.0.0.7/tcp/4001", "/ip6/::1/tcp/4001", "/ip4/127.0.0.1/tcp/4001"),
	}
}

func TestMetaRoundTrip(t *testing.T) {
	m := sampleMeta(t)
	cases := []struct {
		name      string
		limit     int
		wantAddrs int
		wantErr   bool
	}{
		{"all fit", memberlist.MetaMaxSize, 3, false},
		{"drop last addresses", metaFixed + 1 + len(m.PeerID) + 1 + len(m.APIAddr) + 9, 1, false},
		{"no address fits", metaFixed + 1 + len(m.PeerID) + 1 + len(m.APIAddr) + 3, 0, true},
		{"fixed part too big", 20, 0, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := m.encode(tc.limit)
			if tc.wantErr {
				if !errors.Is(err, ErrMeta) {
					t.Fatalf("encode: err %v, want ErrMeta", err)
				}
				return
			}
			if err != nil || len(b) > tc.limit {
				t.Fatalf("encode: %d bytes (limit %d), err %v", len(b), tc.limit, err)
			}
			got, err := decodeMeta(b)
			if err != nil {
				t.Fatal(err)
			}
			want := m
			want.Addrs = m.Addrs[:tc.wantAddrs]
			if !metaEqual(got, want) {
				t.Fatalf("decode = %+v, want %+v", got, want)
			}
		})
	}
}

func metaEqual(a, b meta) bool {
	if a.Boot != b.Boot || a.Leaving != b.Leaving || a.PeerID != b.PeerID || a.APIAddr != b.APIAddr || len(a.Addrs) != len(b.Addrs) {
		return false
	}
	for i := range a.Addrs {
		if !a.Addrs[i].Equal(b.Addrs[i]) {
			return false
		}
	}
	return true
}

func TestDecodeMetaRejects(t *testing.T) {
	good, err := sampleMeta(t).encode(memberlist.MetaMaxSize)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"short", good[:5]},
		{"bad version", append([]byte{9}, good[1:]...)},
		{"truncated peer ID", good[:13]},
		{"unknown flag", append([]byte{1, 2}, good[2:]...)},
		{"truncated address", good[:len(good)-1]},
		{"huge length", append(bytes.Clone(good[:metaFixed]), 0xff, 0xff, 0xff, 0xff, 0x0f)},
		{"bad peer ID", append(bytes.Clone(good[:metaFixed]), 2, 1, 2, 0)},
		{"bad address", append(bytes.Clone(good), 2, 0xff, 0xff)},
		{"over 512 bytes", append(bytes.Clone(good), make([]byte, memberlist.MetaMaxSize)...)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := decodeMeta(tc.b); !errors.Is(err, ErrMeta) {
				t.Fatalf("err %v, want ErrMeta", err)
			}
		})
	}
}

func TestAdvertisedPutsLoopbackLast(t *testing.T) {
	in := testAddrs(t, "/ip4/127.0.0.1/tcp/1", "/ip4/10.1.2.3/tcp/1", "/ip6/::1/tcp/1", "/ip4/192.168.0.2/tcp/1")
	got := addrStrings(advertised(in))
	want := "/ip4/10.1.2.3/tcp/1 /ip4/192.168.0.2/tcp/1 /ip4/127.0.0.1/tcp/1 /ip6/::1/tcp/1"
	if strings.Join(got, " ") != want {
		t.Fatalf("advertised = %v, want %s", got, want)
	}
}

// FuzzDecodeMeta feeds arbitrary bytes to the metadata decoder: it must
// never panic, and whatever it accepts must re-encode to the same bytes.
func FuzzDecodeMeta(f *testing.F) {
	m := sampleMeta(f)
	for _, limit := range []int{memberlist.MetaMaxSize, 80} {
		if b, err := m.encode(limit); err == nil {
			f.Add(b)
		}
	}
	m.APIAddr, m.Addrs, m.Leaving = "", nil, true
	b, _ := m.encode(memberlist.MetaMaxSize)
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := decodeMeta(b)
		if err != nil {
			return
		}
		again, err := got.encode(memberlist.MetaMaxSize)
		if err != nil {
			t.Fatalf("re-encode of accepted metadata: %v", err)
		}
		if back, err := decodeMeta(again); err != nil || !metaEqual(back, got) {
			t.Fatalf("decode(encode(m)) = %+v, %v; want %+v", back, err, got)
		}
	})
}
