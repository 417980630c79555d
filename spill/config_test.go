package spill

import "testing"

// TestOverhead checks that badger's memory scales with the budget between its bounds and
// that a memory-only store has no overhead.
func TestOverhead(t *testing.T) {
	const mib = 1 << 20
	cases := []struct {
		name      string
		cfg       Config
		wantScale int64 // badger memtable and cache size; 0: no badger
		want      int64
	}{
		{"memory only", Config{MemoryLimit: 1 << 30}, 0, 0},
		{"test disk: the spill batch only", Config{MemoryLimit: 64 * mib, Disk: newMemDisk()}, 0, 2 * 8 * mib},
		{"tiny budget: smallest badger", Config{MemoryLimit: 4 * mib, Dir: "x"}, mib, 3*mib + 8*mib + 2*mib},
		{"1/8 of the demo per node", Config{MemoryLimit: 48 * mib, Dir: "x"}, 3 * mib, 9*mib + 8*mib + 16*mib},
		{"default budget: the tuned 16 MiB", Config{Dir: "x"}, 16 * mib, 48*mib + 8*mib + 16*mib},
		{"huge budget: capped", Config{MemoryLimit: 64 << 30, Dir: "x"}, 16 * mib, 48*mib + 8*mib + 16*mib},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.cfg.Overhead(); got != tc.want {
				t.Errorf("Overhead() = %d MiB, want %d MiB", got/mib, tc.want/mib)
			}
			if tc.wantScale == 0 {
				return
			}
			c := tc.cfg.withDefaults()
			if got := badgerScale(c.MemoryLimit); got != tc.wantScale {
				t.Errorf("badgerScale = %d, want %d", got, tc.wantScale)
			}
			opts := badgerOptions(t.TempDir(), c.MemoryLimit, c.Logger)
			if opts.MemTableSize != tc.wantScale || opts.BlockCacheSize != tc.wantScale || opts.IndexCacheSize != tc.wantScale {
				t.Errorf("memtable %d, block cache %d, index cache %d; want %d each",
					opts.MemTableSize, opts.BlockCacheSize, opts.IndexCacheSize, tc.wantScale)
			}
		})
	}
}
