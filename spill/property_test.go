package spill

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// scenario is a random workload: pieces of several shuffles, a budget and a disk.
type scenario struct {
	limit, chunk int64
	disk         string
	workers      int
	puts         []put
}

func randomScenario(rng *rand.Rand) scenario {
	sc := scenario{
		limit:   []int64{1, 100, 1000, 10_000, 100_000, 1 << 30}[rng.IntN(6)],
		chunk:   []int64{0, 1, 4096}[rng.IntN(3)],
		disk:    []string{"mem", "badger"}[rng.IntN(2)],
		workers: 1 + rng.IntN(4),
	}
	seen := map[string]bool{}
	for range 1 + rng.IntN(400) {
		p := put{
			shuffle: fmt.Sprintf("s%d", rng.IntN(3)),
			key:     Key{uint32(rng.IntN(8)), uint64(rng.IntN(30)), uint32(rng.IntN(2)), uint32(rng.IntN(4))},
			size:    randomSize(rng),
		}
		if id := fmt.Sprint(p.shuffle, p.key); !seen[id] {
			seen[id] = true
			sc.puts = append(sc.puts, p)
		}
	}
	return sc
}

// randomSize is mostly small, sometimes empty, sometimes above badger's value threshold.
func randomSize(rng *rand.Rand) int {
	switch rng.IntN(10) {
	case 0:
		return 0
	case 1:
		return 1024 + rng.IntN(20_000)
	default:
		return 1 + rng.IntN(1024)
	}
}

// TestConservation puts random pieces under random budgets (tiny ones force spilling of
// almost everything) from several goroutines, and checks against a brute-force reference
// that every piece comes back exactly once, in Key order, with equal bytes, and that every
// value is released exactly once.
func TestConservation(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 7))
	for i := range 60 {
		sc := randomScenario(rng)
		name := fmt.Sprintf("%d/%s/limit=%d/chunk=%d/pieces=%d/workers=%d", i, sc.disk, sc.limit, sc.chunk, len(sc.puts), sc.workers)
		t.Run(name, func(t *testing.T) { runScenario(t, sc) })
	}
}

func runScenario(t *testing.T, sc scenario) {
	log := newReleaseLog(t)
	cfg := Config{MemoryLimit: sc.limit, SpillChunk: sc.chunk, Disk: newMemDisk()}
	if sc.disk == "badger" {
		cfg = Config{MemoryLimit: sc.limit, SpillChunk: sc.chunk, Dir: t.TempDir()}
	}
	s, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := putConcurrently(t, s, log, sc)
	checkScans(t, s, want)
	st := s.Stats()
	if n := st.MemoryPieces + st.SpilledPieces; n != int64(len(sc.puts)) {
		t.Errorf("stats count %d pieces, want %d", n, len(sc.puts))
	}
	if sc.limit < 1000 && len(sc.puts) > 10 && st.SpilledPieces == 0 {
		t.Errorf("budget %d with %d pieces did not spill", sc.limit, len(sc.puts))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for id := range len(sc.puts) {
		if n := log.count(id); n != 1 {
			t.Fatalf("value %d released %d times", id, n)
		}
	}
}

// putConcurrently puts the scenario's pieces from sc.workers goroutines and returns the
// expected scans.
func putConcurrently(t *testing.T, s *Store, log *releaseLog, sc scenario) map[string]map[uint32][]got {
	want := map[string]map[uint32][]got{}
	values := make([]*testValue, len(sc.puts))
	for i, p := range sc.puts {
		values[i] = &testValue{id: i, data: pieceData(p.shuffle, p.key, p.size), log: log}
		if want[p.shuffle] == nil {
			want[p.shuffle] = map[uint32][]got{}
		}
		want[p.shuffle][p.key.Partition] = append(want[p.shuffle][p.key.Partition], got{Key: p.key, Data: values[i].data})
	}
	var wg sync.WaitGroup
	for w := range sc.workers {
		wg.Go(func() {
			for i := w; i < len(sc.puts); i += sc.workers {
				var v Value = values[i]
				if i%2 == 1 { // half the values write straight into their group
					v = appendValue{values[i]}
				}
				if err := s.Put(sc.puts[i].shuffle, sc.puts[i].key, v); err != nil {
					t.Errorf("Put %d: %v", i, err)
				}
			}
		})
	}
	wg.Wait()
	for _, parts := range want {
		for _, g := range parts {
			sortGot(g)
		}
	}
	return want
}

// TestScanWhileOthersSpill scans one shuffle while other goroutines, and the scan callback
// itself, put to another shuffle under a tiny budget, so spills run during the scan: the
// scanned partition must come back exactly once and its in-memory values must stay valid.
func TestScanWhileOthersSpill(t *testing.T) {
	log := newReleaseLog(t)
	s := openStore(t, Config{Dir: t.TempDir(), MemoryLimit: 20_000, SpillChunk: 2000})
	var puts []put
	for i := range 60 {
		puts = append(puts, put{"scanned", Key{Task: uint64(i)}, 700})
	}
	want := putAll(t, s, log, puts)["scanned"][0]
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 2 {
		wg.Go(func() { putUntil(t, s, log, stop, uint32(w)) })
	}
	for i := range 5 {
		if err := sameData(scanSpilling(t, s, log, uint32(100+i)), want); err != nil {
			t.Error(err)
		}
	}
	close(stop)
	wg.Wait()
}

// putUntil puts pieces of shuffle "other" until stop is closed.
func putUntil(t *testing.T, s *Store, log *releaseLog, stop chan struct{}, seq uint32) {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		v := &testValue{id: log.newID(), data: make([]byte, 900), log: log}
		if err := s.Put("other", Key{Task: uint64(i), Seq: seq}, v); err != nil {
			t.Error(err)
			return
		}
	}
}

// scanSpilling scans partition 0 of "scanned"; at the first piece it puts 40 kB to "other",
// twice the budget, so every spillable piece is spilled while the scan holds its values.
func scanSpilling(t *testing.T, s *Store, log *releaseLog, seq uint32) []got {
	var out []got
	err := s.Scan("scanned", 0, func(k Key, mem Value, disk []byte) error {
		if len(out) == 0 {
			spills := s.Stats().Spills
			for i := range 40 {
				v := &testValue{id: log.newID(), data: make([]byte, 1000), log: log}
				if err := s.Put("other", Key{Partition: 1, Task: uint64(i), Seq: seq}, v); err != nil {
					return err
				}
			}
			if s.Stats().Spills == spills {
				t.Error("no spill ran during the scan")
			}
		}
		if mem != nil {
			var err error
			if disk, err = mem.MarshalSpill(); err != nil { // fails once released
				return err
			}
		}
		out = append(out, got{Key: k, Data: slices.Clone(disk)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
