package bench

import (
	"strings"
	"testing"

	"github.com/shufflenode/shufflenode/measure"
	"github.com/shufflenode/shufflenode/offheap"
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

func TestHugeFaultsIn(t *testing.T) {
	for _, c := range []struct {
		name, vmstat string
		want         int64
	}{
		{"present", "nr_free_pages 5\nthp_fault_alloc 16925\nthp_fault_fallback 0\n", 16925},
		{"a longer name first", "thp_fault_alloc_x 3\nthp_fault_alloc 7\n", 7},
		{"absent", "nr_free_pages 5\n", 0},
	} {
		if got := hugeFaultsIn(c.vmstat); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

// TestFreshSeconds checks the estimate against hand arithmetic: 1000 4 KiB
// faults at 4 MB/s of 4 KiB pages, 10 huge ones at 20 MiB per second.
func TestFreshSeconds(t *testing.T) {
	small := Ceiling{Bytes: 4_096_000, Seconds: 1}                 // 1000 pages a second
	huge := Ceiling{Bytes: 20 * offheap.HugePageBytes, Seconds: 1} // 20 huge pages a second
	f := freshMemory{smallFaults: 1000, hugeFaults: 10}
	if got, want := f.seconds(small, huge), 1.5; got < want-1e-9 || got > want+1e-9 {
		t.Errorf("seconds %v, want %v", got, want)
	}
}

// TestBenchRowFresh checks that a row's huge-page faults are taken out of
// its minor faults (each huge page is also one minor fault), across the
// serve processes too.
func TestBenchRowFresh(t *testing.T) {
	r := benchRow{usage: measure.Usage{MinorFaults: 100}, procs: []measure.Usage{{MinorFaults: 50}, {MinorFaults: 25}}, huge: 30}
	if got, want := r.fresh(), (freshMemory{smallFaults: 145, hugeFaults: 30}); got != want {
		t.Errorf("fresh %+v, want %+v", got, want)
	}
}
