package spill

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// put is one Put of a test script.
type put struct {
	shuffle string
	key     Key
	size    int
}

// putAll puts the pieces (value IDs from log.newID) and returns them as the Scan of their partitions should return them.
func putAll(t *testing.T, s *Store, log *releaseLog, puts []put) map[string]map[uint32][]got {
	t.Helper()
	want := map[string]map[uint32][]got{}
	for i, p := range puts {
		data := pieceData(p.shuffle, p.key, p.size)
		if err := s.Put(p.shuffle, p.key, &testValue{id: log.newID(), data: data, log: log}); err != nil {
			t.Fatalf("Put %d: %v", i, err)
		}
		if want[p.shuffle] == nil {
			want[p.shuffle] = map[uint32][]got{}
		}
		want[p.shuffle][p.key.Partition] = append(want[p.shuffle][p.key.Partition], got{Key: p.key, Data: data})
	}
	for _, parts := range want {
		for _, g := range parts {
			sortGot(g)
		}
	}
	return want
}

// checkScans scans every partition of want (and partition 99, which is empty).
func checkScans(t *testing.T, s *Store, want map[string]map[uint32][]got) (onDisk int) {
	t.Helper()
	for sh, parts := range want {
		var ids []uint32
		for p, w := range parts {
			g := scanAll(t, s, sh, p)
			if err := sameData(g, w); err != nil {
				t.Errorf("shuffle %q partition %d: %v", sh, p, err)
			}
			var bytes int64
			for _, x := range g {
				if x.OnDisk {
					onDisk++
				}
				bytes += int64(len(x.Data))
			}
			if n := s.PartitionBytes(sh, p); n != bytes {
				t.Errorf("PartitionBytes(%q, %d) = %d, want the %d bytes its pieces hold", sh, p, n, bytes)
			}
			ids = append(ids, p)
		}
		slices.Sort(ids)
		if ps := s.Partitions(sh); !slices.Equal(ps, ids) {
			t.Errorf("Partitions(%q) = %v, want %v", sh, ps, ids)
		}
		if g := scanAll(t, s, sh, 99); len(g) != 0 || s.PartitionBytes(sh, 99) != 0 {
			t.Errorf("empty partition 99 of %q returned %d pieces, PartitionBytes %d", sh, len(g), s.PartitionBytes(sh, 99))
		}
	}
	return onDisk
}

func TestPutScan(t *testing.T) {
	k := func(p uint32, task uint64, seq uint32) Key { return Key{Partition: p, Task: task, Seq: seq} }
	cases := []struct {
		name       string
		limit      int64
		disk       string // "", "mem" or "badger"
		puts       []put
		wantOnDisk int // pieces Scan must return from disk; -1: any
	}{
		{"memory only, in order", 1 << 20, "", []put{
			{"a", k(0, 0, 0), 10}, {"a", k(0, 1, 0), 10}, {"a", k(1, 0, 0), 10},
		}, 0},
		{"memory only, out of order", 1 << 20, "", []put{
			{"a", k(0, 5, 1), 10}, {"a", k(0, 5, 0), 10}, {"a", k(0, 1, 9), 10},
			{"a", Key{Partition: 0, Task: 1, Attempt: 1}, 10},
		}, 0},
		{"two shuffles, same keys", 1 << 20, "", []put{
			{"a", k(0, 0, 0), 10}, {"b", k(0, 0, 0), 20}, {"ab", k(0, 0, 0), 30},
		}, 0},
		{"empty values", 1 << 20, "mem", []put{{"a", k(3, 0, 0), 0}, {"a", k(3, 1, 0), 0}}, 0},
		{"budget of one byte spills everything", 1, "mem", []put{
			{"a", k(0, 2, 0), 100}, {"a", k(0, 0, 0), 100}, {"a", k(0, 1, 0), 100}, {"b", k(0, 1, 0), 100},
		}, 4},
		{"mixed memory and disk, badger", 250, "badger", []put{
			{"a", k(0, 3, 0), 100}, {"a", k(0, 1, 0), 100}, {"a", k(1, 0, 0), 100},
			{"a", k(0, 2, 0), 100}, {"a", k(0, 0, 0), 100}, {"b", k(0, 0, 0), 2000},
		}, -1},
		{"large values to the value log, badger", 10 << 10, "badger", []put{
			{"a", k(0, 0, 0), 64 << 10}, {"a", k(0, 1, 0), 64 << 10}, {"a", k(0, 0, 1), 1},
		}, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			log := newReleaseLog(t)
			cfg := Config{MemoryLimit: tc.limit, Node: "n1"}
			switch tc.disk {
			case "mem":
				cfg.Disk = newMemDisk()
			case "badger":
				cfg.Dir = t.TempDir()
			}
			s := openStore(t, cfg)
			want := putAll(t, s, log, tc.puts)
			if n := checkScans(t, s, want); tc.wantOnDisk >= 0 && n != tc.wantOnDisk {
				t.Errorf("%d pieces came from disk, want %d", n, tc.wantOnDisk)
			}
			st := s.Stats()
			if st.MemoryPieces+st.SpilledPieces != int64(len(tc.puts)) {
				t.Errorf("stats: %d in memory + %d spilled, want %d pieces", st.MemoryPieces, st.SpilledPieces, len(tc.puts))
			}
		})
	}
}

func TestPutErrors(t *testing.T) {
	cases := []struct {
		name    string
		cfg     Config
		before  []put // put first, must succeed
		shuffle string
		key     Key
		value   Value
		want    error
	}{
		{"duplicate in memory", Config{}, []put{{"s", Key{Task: 1}, 10}}, "s", Key{Task: 1}, nil, ErrDuplicate},
		{"duplicate on disk", Config{MemoryLimit: 1, Disk: newMemDisk()},
			[]put{{"s", Key{Task: 1}, 10}, {"s", Key{Task: 2}, 10}}, "s", Key{Task: 1}, nil, ErrDuplicate},
		{"memory full", Config{MemoryLimit: 100}, []put{{"s", Key{Task: 1}, 60}}, "s", Key{Task: 2}, nil, ErrMemoryFull},
		{"nil value", Config{}, nil, "s", Key{}, Value(nil), ErrInvalid},
		{"negative size", Config{}, nil, "s", Key{}, negativeValue{}, ErrInvalid},
		{"empty shuffle ID", Config{}, nil, "", Key{}, nil, ErrInvalid},
		{"overlong shuffle ID", Config{}, nil, strings.Repeat("x", MaxShuffleIDLen+1), Key{}, nil, ErrInvalid},
		{"marshal failure", Config{MemoryLimit: 10, Disk: newMemDisk()},
			[]put{{"s", Key{Task: 1}, 10}}, "s", Key{Task: 2}, nil, ErrMarshal},
		{"append failure", Config{MemoryLimit: 10, Disk: newMemDisk()},
			[]put{{"s", Key{Task: 1}, 10}}, "s", Key{Task: 2}, nil, ErrMarshal},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			log := newReleaseLog(t)
			tc.cfg.Node = "node-7"
			s := openStore(t, tc.cfg)
			putAll(t, s, log, tc.before)
			v := tc.value
			if v == nil && tc.name != "nil value" {
				v = &testValue{id: 1000, data: make([]byte, 50), log: log, failMarshal: tc.want == ErrMarshal}
			}
			if tc.want == ErrMarshal {
				p := s.shuffles["s"].parts[0].mem[0]
				p.value.(*testValue).failMarshal = true
				if tc.name == "append failure" {
					p.value = appendValue{p.value.(*testValue)}
				}
			}
			err := s.Put(tc.shuffle, tc.key, v)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Put error = %v, want %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), "node-7") || !strings.Contains(err.Error(), fmt.Sprintf("%q", tc.shuffle)) {
				t.Errorf("error %q does not name shuffle and node", err)
			}
			if log.count(1000) != 0 {
				t.Errorf("a rejected value was released: the caller still owns it")
			}
			if n := s.Stats().MemoryPieces + s.Stats().SpilledPieces; n != int64(len(tc.before)) {
				t.Errorf("store holds %d pieces, want the %d put before", n, len(tc.before))
			}
		})
	}
}

// negativeValue reports a negative size.
type negativeValue struct{}

func (negativeValue) Size() int64                   { return -1 }
func (negativeValue) MarshalSpill() ([]byte, error) { return nil, nil }
func (negativeValue) Release()                      {}

func TestClosed(t *testing.T) {
	log := newReleaseLog(t)
	s, err := Open(Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	putAll(t, s, log, []put{{"s", Key{}, 10}})
	for i := range 2 {
		if err := s.Close(); err != nil {
			t.Fatalf("Close %d: %v", i, err)
		}
	}
	log.checkAll(t, []int{0})
	if err := s.Put("s", Key{Task: 1}, &testValue{data: []byte("x")}); !errors.Is(err, ErrClosed) {
		t.Errorf("Put after Close: %v, want ErrClosed", err)
	}
	if err := s.Scan("s", 0, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Scan after Close: %v, want ErrClosed", err)
	}
	if err := s.DropShuffle("s"); !errors.Is(err, ErrClosed) {
		t.Errorf("DropShuffle after Close: %v, want ErrClosed", err)
	}
}

func TestScanStopsAtError(t *testing.T) {
	for _, disk := range []string{"memory", "badger"} {
		t.Run(disk, func(t *testing.T) {
			cfg := Config{MemoryLimit: 1 << 20}
			if disk == "badger" {
				cfg = Config{MemoryLimit: 1, Dir: t.TempDir()}
			}
			s := openStore(t, cfg)
			var puts []put
			for i := range 5 {
				puts = append(puts, put{"s", Key{Task: uint64(i)}, 10})
			}
			putAll(t, s, newReleaseLog(t), puts)
			stop := errors.New("stop")
			calls := 0
			err := s.Scan("s", 0, func(Key, Value, []byte) error {
				if calls++; calls == 3 {
					return stop
				}
				return nil
			})
			if err != stop || calls != 3 {
				t.Fatalf("Scan = %v after %d calls, want the callback's error after 3", err, calls)
			}
		})
	}
}

func TestDropShuffle(t *testing.T) {
	log := newReleaseLog(t)
	s := openStore(t, Config{Dir: t.TempDir(), MemoryLimit: 3000, SpillChunk: 1000, Node: "n1"})
	var puts []put
	for i := range 40 {
		puts = append(puts, put{[]string{"a", "b"}[i%2], Key{Partition: uint32(i % 3), Task: uint64(i)}, 500})
	}
	want := putAll(t, s, log, puts)
	before := s.Stats()
	if before.Shuffles["a"].SpilledPieces == 0 || before.Shuffles["a"].MemoryPieces == 0 {
		t.Fatalf("shuffle a should be partly spilled: %+v", before.Shuffles["a"])
	}
	if err := s.DropShuffle("a"); err != nil {
		t.Fatal(err)
	}
	checkDropped(t, s, log, puts, "a")
	after := s.Stats()
	if after.DiskBytesLive != before.Shuffles["b"].SpilledBytes || after.MemoryBytes != before.Shuffles["b"].MemoryBytes {
		t.Errorf("after drop: %+v; want only b's %+v", after, before.Shuffles["b"])
	}
	delete(want, "a")
	checkScans(t, s, want)
	if err := s.DropShuffle("b"); err != nil { // the last shuffle on disk: DropAll
		t.Fatal(err)
	}
	checkDropped(t, s, log, puts, "b")
	if err := s.DropShuffle("never-created"); err != nil {
		t.Errorf("dropping an unknown shuffle: %v", err)
	}
	// The store is still usable after DropAll.
	want = putAll(t, s, log, []put{{"a", Key{}, 5000}, {"c", Key{}, 5000}})
	checkScans(t, s, want)
}

// checkDropped asserts that a dropped shuffle left nothing in memory, on disk or in Stats.
func checkDropped(t *testing.T, s *Store, log *releaseLog, puts []put, shuffle string) {
	t.Helper()
	for i, p := range puts {
		if p.shuffle == shuffle && log.count(i) != 1 {
			t.Errorf("piece %d of dropped shuffle released %d times", i, log.count(i))
		}
	}
	if ps := s.Partitions(shuffle); len(ps) != 0 {
		t.Errorf("Partitions(%q) = %v after drop", shuffle, ps)
	}
	if _, ok := s.Stats().Shuffles[shuffle]; ok {
		t.Errorf("Stats still lists dropped shuffle %q", shuffle)
	}
	n := 0
	if err := s.disk.Scan(shufflePrefix(shuffle), func(_, _ []byte) error { n++; return nil }); err != nil || n != 0 {
		t.Errorf("disk holds %d keys of dropped shuffle %q (err %v)", n, shuffle, err)
	}
}

// TestDropDuringScan drops a shuffle from inside a Scan callback: the values handed out stay
// valid until the Scan ends, then they are released.
func TestDropDuringScan(t *testing.T) {
	log := newReleaseLog(t)
	s := openStore(t, Config{Disk: newMemDisk(), MemoryLimit: 1000, SpillChunk: 100})
	var puts []put
	for i := range 10 {
		puts = append(puts, put{"s", Key{Task: uint64(i)}, 300})
	}
	want := putAll(t, s, log, puts)
	var seen []got
	err := s.Scan("s", 0, func(k Key, mem Value, disk []byte) error {
		if len(seen) == 0 {
			if err := s.DropShuffle("s"); err != nil {
				return err
			}
		}
		data := disk
		if mem != nil {
			var err error
			if data, err = mem.MarshalSpill(); err != nil { // fails if released
				return err
			}
		}
		seen = append(seen, got{Key: k, Data: slices.Clone(data)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) == 0 || len(seen) > len(want["s"][0]) {
		t.Fatalf("scan saw %d pieces", len(seen))
	}
	if err := sameData(seen, want["s"][0][:len(seen)]); err != nil {
		t.Error(err)
	}
	checkDropped(t, s, log, puts, "s")
	if st := s.Stats(); st.MemoryBytes != 0 || st.MemoryPieces != 0 {
		t.Errorf("memory not freed after the scan: %+v", st)
	}
}

func TestOpenDir(t *testing.T) {
	t.Run("refuses a foreign non-empty dir", func(t *testing.T) {
		dir := t.TempDir()
		keep := filepath.Join(dir, "precious.txt")
		if err := os.WriteFile(keep, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(Config{Dir: dir}); !errors.Is(err, ErrConfig) {
			t.Fatalf("Open = %v, want ErrConfig", err)
		}
		if _, err := os.Stat(keep); err != nil {
			t.Fatalf("foreign file touched: %v", err)
		}
	})
	t.Run("wipes an old spill dir", func(t *testing.T) {
		dir := t.TempDir()
		for _, f := range []string{markerName, "000001.vlog"} {
			if err := os.WriteFile(filepath.Join(dir, f), []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		s := openStore(t, Config{Dir: dir})
		if n := scanAll(t, s, "s", 0); len(n) != 0 {
			t.Fatalf("old data visible: %v", n)
		}
	})
	t.Run("one store per dir", func(t *testing.T) {
		dir := t.TempDir()
		openStore(t, Config{Dir: dir})
		if s, err := Open(Config{Dir: dir}); !errors.Is(err, ErrConfig) {
			if s != nil {
				s.Close()
			}
			t.Fatalf("second Open = %v, want ErrConfig", err)
		}
	})
	t.Run("close removes a dir it created", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "spill")
		s, err := Open(Config{Dir: dir, MemoryLimit: 1})
		if err != nil {
			t.Fatal(err)
		}
		putAll(t, s, newReleaseLog(t), []put{{"s", Key{}, 10}, {"s", Key{Task: 1}, 10}})
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("dir left behind: %v", err)
		}
	})
}

func TestConfig(t *testing.T) {
	cases := []struct {
		name      string
		cfg       Config
		wantErr   bool
		wantChunk int64
	}{
		{"zero is default", Config{}, false, DefaultSpillChunk},
		{"small budget, quarter chunk", Config{MemoryLimit: 1000}, false, 250},
		{"tiny budget, chunk of one", Config{MemoryLimit: 1}, false, 1},
		{"explicit chunk", Config{MemoryLimit: 100, SpillChunk: 1000}, false, 1000},
		{"negative limit", Config{MemoryLimit: -1}, true, 0},
		{"negative chunk", Config{SpillChunk: -1}, true, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if (err != nil) != tc.wantErr || (err != nil && !errors.Is(err, ErrConfig)) {
				t.Fatalf("Validate = %v, wantErr %v", err, tc.wantErr)
			}
			if _, oerr := Open(tc.cfg); (oerr != nil) != tc.wantErr {
				t.Fatalf("Open error %v, wantErr %v", oerr, tc.wantErr)
			}
			if c := tc.cfg.withDefaults(); !tc.wantErr && c.SpillChunk != tc.wantChunk {
				t.Errorf("SpillChunk = %d, want %d", c.SpillChunk, tc.wantChunk)
			}
		})
	}
	if d := DefaultConfig(); d.MemoryLimit != DefaultMemoryLimit || d.Node != DefaultNode || d.Logger == nil {
		t.Errorf("DefaultConfig() = %+v", d)
	}
}

// TestBadgerLogsToSlog checks that badger's logger is routed into the store's slog logger
// (badger's info lines at Debug) and not to stderr, once a spill opened it.
func TestBadgerLogsToSlog(t *testing.T) {
	var buf strings.Builder
	h := slog.NewTextHandler(&lockedWriter{w: &buf}, &slog.HandlerOptions{Level: slog.LevelDebug})
	s, err := Open(Config{MemoryLimit: 1, Dir: t.TempDir(), Logger: slog.New(h), Node: "n9"})
	if err != nil {
		t.Fatal(err)
	}
	putAll(t, s, newReleaseLog(t), []put{{"s", Key{Task: 1}, 10}}) // over the budget: spilled
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.Contains(out, "component=badger") || !strings.Contains(out, "node=n9") {
		t.Fatalf("no badger log line reached slog:\n%s", out)
	}
}

// TestBadgerOpensAtFirstSpill checks that a store whose pieces fit in memory never opens
// badger (no files beside the marker, though it was scanned and dropped from), and that the
// first spill opens it and is read back.
func TestBadgerOpensAtFirstSpill(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, Config{MemoryLimit: 100, Dir: dir})
	putAll(t, s, newReleaseLog(t), []put{{"s", Key{Task: 1}, 10}})
	if err := s.Scan("s", 0, func(Key, Value, []byte) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.DropShuffle("s"); err != nil {
		t.Fatal(err)
	}
	if names, _ := readNames(dir); !slices.Equal(names, []string{markerName}) {
		t.Fatalf("before any spill the directory holds %v, want only the marker", names)
	}
	putAll(t, s, newReleaseLog(t), []put{{"t", Key{Task: 1}, 60}, {"t", Key{Task: 2}, 60}}) // 120 > 100: one spills
	if names, _ := readNames(dir); len(names) < 2 {
		t.Fatalf("after a spill the directory holds %v, want badger's files too", names)
	}
	var disk int
	if err := s.Scan("t", 0, func(_ Key, mem Value, b []byte) error {
		if mem == nil && len(b) == 60 {
			disk++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if disk != 1 {
		t.Fatalf("%d pieces read back from disk, want 1", disk)
	}
}

// lockedWriter serialises writes from badger's goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// dropCounter wraps badger and counts DropAll calls.
type dropCounter struct {
	*badgerDisk
	dropAlls int
}

func (d *dropCounter) DropAll() error {
	d.dropAlls++
	return d.badgerDisk.DropAll()
}

// TestNoDropAllDuringScan drops every shuffle while a scan still reads the disk: the store
// must use DropPrefix (badger's DropAll is unsafe with concurrent reads), then DropAll once
// the disk is idle.
func TestNoDropAllDuringScan(t *testing.T) {
	bd, err := openBadger(t.TempDir(), DefaultMemoryLimit, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	d := &dropCounter{badgerDisk: bd}
	s := openStore(t, Config{Disk: d, MemoryLimit: 1})
	log := newReleaseLog(t)
	var puts []put
	for i := range 6 {
		puts = append(puts, put{[]string{"a", "b"}[i%2], Key{Task: uint64(i)}, 2000})
	}
	want := putAll(t, s, log, puts)
	var seen []got
	err = s.Scan("a", 0, func(k Key, mem Value, disk []byte) error {
		if len(seen) == 0 {
			for _, sh := range []string{"a", "b"} {
				if err := s.DropShuffle(sh); err != nil {
					return err
				}
			}
			if d.dropAlls != 0 {
				t.Error("DropAll ran while a scan read the disk")
			}
		}
		if mem != nil {
			disk = mem.(*testValue).data
		}
		seen = append(seen, got{Key: k, Data: slices.Clone(disk)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) == 0 {
		t.Fatal("scan saw nothing")
	}
	if err := sameData(seen, want["a"][0][:len(seen)]); err != nil {
		t.Error(err)
	}
	putAll(t, s, log, []put{{"c", Key{}, 2000}, {"c", Key{Task: 1}, 2000}})
	if err := s.DropShuffle("c"); err != nil {
		t.Fatal(err)
	}
	if d.dropAlls != 1 {
		t.Errorf("DropAll ran %d times once the disk was idle, want 1", d.dropAlls)
	}
}
