package parquetio

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestPlanKeyShares: Writers with the same PlanKey take the plan of the
// last one that sampled, until planReuse have; then one samples again. A
// first record of fewer than autoSampleValues rows is not shared, a plan is
// shared only under the same key, and every file reads back whole whatever
// plan it took. Writers with the same key in another cache share nothing
// with them.
func TestPlanKeyShares(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	dir := t.TempDir()
	cache := NewPlanCache()
	n := 0
	write := func(key string, rows int, zeroVal bool) map[string]colPlan {
		t.Helper()
		rec := autoRecord(mem, rows, uint64(n), zeroVal)
		defer rec.Release()
		path := filepath.Join(dir, fmt.Sprintf("f%d.parquet", n))
		n++
		plans := writePlans(t, path, []arrow.Record{rec}, WriteConfig{PlanKey: key, Plans: cache})
		checkRoundTrip(t, mem, path, []arrow.Record{rec})
		return plans
	}
	key := t.Name() + "/a"
	// Zeros in val compress (Snappy); random bits do not (Uncompressed).
	if got := write(key, 3000, true)["val"].codec; got != Snappy {
		t.Fatalf("the first file's val: %s, want snappy (sampled)", got)
	}
	for i := range planReuse {
		if got := write(key, 3000, false)["val"].codec; got != Snappy {
			t.Fatalf("file %d after the sampled one: val %s, want the shared snappy", i+1, got)
		}
	}
	if got := write(key, 3000, false)["val"].codec; got != Uncompressed {
		t.Fatalf("file %d after the sampled one: val %s, want none (sampled again)", planReuse+1, got)
	}
	if got := write(key, 3000, true)["val"].codec; got != Uncompressed {
		t.Fatalf("the next file: val %s, want the new shared plan's none", got)
	}

	other := t.Name() + "/b"
	if got := write(other, 3000, true)["val"].codec; got != Snappy {
		t.Fatalf("another key's first file: val %s, want snappy (its own sample)", got)
	}

	small := t.Name() + "/small"
	if got := write(small, autoSampleValues-1, true)["val"].codec; got != Snappy {
		t.Fatalf("a small first file: val %s, want snappy", got)
	}
	if got := write(small, 3000, false)["val"].codec; got != Uncompressed {
		t.Fatalf("after a small first file: val %s, want none (not shared)", got)
	}

	for range 2 {
		if got := write("", 3000, true)["val"].codec; got != Snappy {
			t.Fatalf("no key: val %s, want snappy", got)
		}
		if got := write("", 3000, false)["val"].codec; got != Uncompressed {
			t.Fatalf("no key: val %s, want none (every file samples)", got)
		}
	}

	cache = NewPlanCache()
	if got := write(key, 3000, true)["val"].codec; got != Snappy {
		t.Fatalf("the same key in another cache: val %s, want snappy (its own sample)", got)
	}
	mem.AssertSize(t, 0)
}

// TestPlanCacheBounded: the shared plans stay at most planCacheSize.
func TestPlanCacheBounded(t *testing.T) {
	c := NewPlanCache()
	for i := range planCacheSize + 10 {
		c.put(planKey{key: fmt.Sprintf("%s/%d", t.Name(), i)}, map[string]colPlan{})
	}
	if len(c.m) > planCacheSize {
		t.Fatalf("%d shared plans, want at most %d", len(c.m), planCacheSize)
	}
}
