package job

import (
	"strings"
	"testing"
)

// TestFirstTouchCeilings checks that both first-touch ceilings are
// measured over the bytes asked for (a page at least is touched: the time
// is never zero) under distinct names.
func TestFirstTouchCeilings(t *testing.T) {
	const bytes = 8 << 20
	cs, err := FirstTouchCeilings(bytes)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 || cs[0].Name == cs[1].Name {
		t.Fatalf("ceilings %+v, want two with distinct names", cs)
	}
	for _, c := range cs {
		if !strings.HasPrefix(c.Name, "memory: first touch") || c.Bytes != bytes || c.Seconds <= 0 {
			t.Errorf("ceiling %+v: want a first-touch ceiling of %d bytes with a time", c, bytes)
		}
	}
}

// TestTouchPagesTouchesEveryPage checks the stride: every page of the
// buffer is written, and nothing between.
func TestTouchPagesTouchesEveryPage(t *testing.T) {
	b := make([]byte, 3*touchStride+1)
	touchPages(b)
	for i, v := range b {
		want := byte(0)
		if i%touchStride == 0 {
			want = 1
		}
		if v != want {
			t.Fatalf("byte %d = %d, want %d", i, v, want)
		}
	}
}
