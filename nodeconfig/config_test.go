package nodeconfig

import (
	"testing"
	"time"
)

// TestWithDefaults: a zero field takes its default, a set one stays, and
// OpMemory defaults to half of the MemoryLimit given.
func TestWithDefaults(t *testing.T) {
	d := Default()
	if got := (Config{}).WithDefaults(); got.MemoryLimit != d.MemoryLimit || got.MaxTasks != DefaultMaxTasks || got.OpMemory != d.MemoryLimit/2 || got.Logger == nil || got.Clock == nil {
		t.Fatalf("zero config with defaults: %+v", got)
	}
	c := Config{MemoryLimit: 64 << 20, IdleExpiry: -1, MaxShuffles: 3, Recheck: time.Minute}.WithDefaults()
	if c.MemoryLimit != 64<<20 || c.OpMemory != 32<<20 || c.IdleExpiry != -1 || c.MaxShuffles != 3 || c.Recheck != time.Minute {
		t.Fatalf("set fields changed: %+v", c)
	}
	if c.KeptRegions() != c.Memory().Store() {
		t.Errorf("kept regions %d, want the store's budget %d", c.KeptRegions(), c.Memory().Store())
	}
	if c := (Config{KeepRegions: -1}); c.KeptRegions() != 0 {
		t.Errorf("KeepRegions negative: keeps %d bytes, want none", c.KeptRegions())
	}
	if c.MemoryOverhead() < c.InputBytes()+c.InboundBytes()+c.OutputBytes() {
		t.Errorf("overhead %d below the batches it counts", c.MemoryOverhead())
	}
}

// TestValidate refuses negative sizes, caps and recheck periods.
func TestValidate(t *testing.T) {
	if err := (Config{}).Validate(); err != nil {
		t.Fatalf("zero config: %v", err)
	}
	for _, c := range []Config{{MemoryLimit: -1}, {OpMemory: -1}, {MaxInFlight: -1}, {MaxTasks: -1}, {MaxRuns: -1}, {Recheck: -time.Second}} {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}
