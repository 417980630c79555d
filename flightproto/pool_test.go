package flightproto

import (
	"bytes"
	"testing"
)

// TestPoolPoison: a pool overwrites a released buffer only when its config
// says so; either way the buffer goes back to the pool whole.
func TestPoolPoison(t *testing.T) {
	for _, poison := range []bool{false, true} {
		p := NewPool(PoolConfig{PoisonReleased: poison})
		b := p.bufs.Get(5000)
		copy(*b, bytes.Repeat([]byte{7}, len(*b)))
		full := (*b)[:cap(*b)]
		p.bufs.putReleased(b)
		want := byte(7)
		if poison {
			want = 0xA5
		}
		if full[0] != want || full[4999] != want {
			t.Errorf("PoisonReleased %v: released buffer holds %#x, want %#x", poison, full[0], want)
		}
		if cap(full) != 1<<13 {
			t.Errorf("PoisonReleased %v: a 5000-byte buffer has capacity %d, want 8192", poison, cap(full))
		}
	}
}
