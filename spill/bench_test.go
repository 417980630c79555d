package spill

import (
	"fmt"
	"log/slog"
	"runtime"
	"testing"
	"time"
)

// diskBackends is the benchmark suite's list of Disk implementations; add a backend here and
// every disk benchmark runs on it.
var diskBackends = []struct {
	name string
	open func(b *testing.B) Disk
}{
	{"mem", func(*testing.B) Disk { return newMemDisk() }},
	{"badger", func(b *testing.B) Disk {
		d, err := openBadger(b.TempDir(), DefaultMemoryLimit, slog.New(slog.DiscardHandler))
		if err != nil {
			b.Fatal(err)
		}
		return d
	}},
}

var benchSizes = []int{1 << 10, 64 << 10}

// heapPeak samples HeapInuse until stopped.
type heapPeak struct {
	stop, done chan struct{}
	peak       uint64
}

func startHeapPeak() *heapPeak {
	runtime.GC()
	h := &heapPeak{stop: make(chan struct{}), done: make(chan struct{})}
	go h.loop()
	return h
}

func (h *heapPeak) loop() {
	defer close(h.done)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		h.sample()
		select {
		case <-h.stop:
			return
		case <-tick.C:
		}
	}
}

func (h *heapPeak) sample() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	h.peak = max(h.peak, ms.HeapInuse)
}

// report stops sampling and reports the peak in MiB.
func (h *heapPeak) report(b *testing.B) {
	close(h.stop)
	<-h.done
	h.sample()
	b.ReportMetric(float64(h.peak)/(1<<20), "peak-heap-MiB")
}

// BenchmarkDiskWrite writes spill batches of 8 MiB straight to each Disk backend, dropping
// each 256 MiB shuffle once written. One op is one value.
func BenchmarkDiskWrite(b *testing.B) {
	for _, be := range diskBackends {
		for _, size := range benchSizes {
			b.Run(fmt.Sprintf("%s/%dKiB", be.name, size>>10), func(b *testing.B) {
				benchDiskWrite(b, be.open(b), size)
			})
		}
	}
}

func benchDiskWrite(b *testing.B, d Disk, size int) {
	defer d.Close()
	perBatch := max(1, (8<<20)/size)
	perShuffle := (256 << 20) / size
	value := pieceData("bench", Key{}, size)
	b.ReportAllocs()
	b.SetBytes(int64(size))
	h := startHeapPeak()
	var batch []Entry
	for i := 0; b.Loop(); i++ {
		shuffle := fmt.Sprint("s", i/perShuffle)
		batch = append(batch, Entry{Key: encodeKey(shuffle, Key{Task: uint64(i)}), Value: value})
		if len(batch) == perBatch {
			if err := d.WriteBatch(batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
		if (i+1)%perShuffle == 0 {
			if err := d.DropPrefix(shufflePrefix(shuffle)); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := d.WriteBatch(batch); err != nil {
		b.Fatal(err)
	}
	h.report(b)
}

// BenchmarkDiskScan reads back 64 MiB from each Disk backend. One op is one full scan.
func BenchmarkDiskScan(b *testing.B) {
	for _, be := range diskBackends {
		for _, size := range benchSizes {
			b.Run(fmt.Sprintf("%s/%dKiB", be.name, size>>10), func(b *testing.B) {
				benchDiskScan(b, be.open(b), size)
			})
		}
	}
}

func benchDiskScan(b *testing.B, d Disk, size int) {
	defer d.Close()
	const total = 64 << 20
	value := pieceData("bench", Key{}, size)
	batch := make([]Entry, total/size)
	for i := range batch {
		batch[i] = Entry{Key: encodeKey("s", Key{Task: uint64(i)}), Value: value}
	}
	if err := d.WriteBatch(batch); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(total)
	h := startHeapPeak()
	for b.Loop() {
		read := 0
		err := d.Scan(shufflePrefix("s"), func(_, v []byte) error {
			read += len(v)
			return nil
		})
		if err != nil || read != total {
			b.Fatalf("scan read %d bytes, want %d (err %v)", read, total, err)
		}
	}
	h.report(b)
}

// BenchmarkStorePut puts fresh values into a memory-only store (budget 256 MiB) and into a
// badger-backed store (budget 64 MiB, so most values spill), dropping each 128 MiB shuffle
// once put. One op is one Put; peak-heap-MiB shows what the budget and badger cost.
func BenchmarkStorePut(b *testing.B) {
	stores := []struct {
		name string
		cfg  func(b *testing.B) Config
	}{
		{"memory-only", func(*testing.B) Config { return Config{MemoryLimit: 256 << 20} }},
		{"badger", func(b *testing.B) Config { return Config{MemoryLimit: 64 << 20, Dir: b.TempDir()} }},
	}
	for _, st := range stores {
		for _, size := range append([]int{512}, benchSizes...) { // 512 B: the demo's pieces
			b.Run(fmt.Sprintf("%s/%dB", st.name, size), func(b *testing.B) {
				benchStorePut(b, st.cfg(b), size)
			})
		}
	}
}

func benchStorePut(b *testing.B, cfg Config, size int) {
	s, err := Open(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	perShuffle := (128 << 20) / size
	b.ReportAllocs()
	b.SetBytes(int64(size))
	h := startHeapPeak()
	for i := 0; b.Loop(); i++ {
		shuffle := fmt.Sprint("s", i/perShuffle)
		v := &testValue{data: make([]byte, size)}
		if err := s.Put(shuffle, Key{Partition: uint32(i % 64), Task: uint64(i)}, v); err != nil {
			b.Fatal(err)
		}
		if (i+1)%perShuffle == 0 {
			if err := s.DropShuffle(shuffle); err != nil {
				b.Fatal(err)
			}
		}
	}
	h.report(b)
	st := s.Stats()
	b.ReportMetric(float64(st.SpilledBytes)/float64(b.N*size), "spilled-fraction")
}
