package durable

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
)

// syncLog records the paths synced (syncOne) while a test runs.
type syncLog struct {
	mu    sync.Mutex
	count map[string]int
}

func watchSyncs(t *testing.T) *syncLog {
	l := &syncLog{count: make(map[string]int)}
	orig := syncOne
	syncOne = func(path string) error {
		l.mu.Lock()
		l.count[path]++
		l.mu.Unlock()
		return orig(path)
	}
	t.Cleanup(func() { syncOne = orig })
	return l
}

func (l *syncLog) synced(path string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.count[path]
}

func (l *syncLog) total() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, c := range l.count {
		n += c
	}
	return n
}

// writeFiles writes n small files in dir.
func writeFiles(t *testing.T, dir, prefix string, n int) []string {
	t.Helper()
	paths := make([]string, n)
	for i := range paths {
		paths[i] = filepath.Join(dir, fmt.Sprintf("%s%03d", prefix, i))
		if err := os.WriteFile(paths[i], []byte(strings.Repeat("y", i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return paths
}

// TestSyncerSyncsInBackground: files are synced in batches while more are
// added, before Wait; Wait syncs the rest and each directory; every file
// is synced once. In a synctest bubble, synctest.Wait returns once the
// background syncs are done.
func TestSyncerSyncsInBackground(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log := watchSyncs(t)
		dirs := []string{t.TempDir(), t.TempDir()}
		paths := append(writeFiles(t, dirs[0], "a", 6), writeFiles(t, dirs[1], "b", 4)...)
		s := NewSyncer(context.Background(), 4, 2)
		for _, p := range paths {
			s.Add(p)
		}
		synctest.Wait() // the background syncs ran and are idle
		if n := log.total(); n < 8 {
			t.Fatalf("%d of 10 files synced before Wait, want the 8 of two full batches", n)
		}
		if err := s.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, p := range append(paths, dirs...) {
			if n := log.synced(p); n != 1 {
				t.Errorf("%s synced %d times, want once", p, n)
			}
		}
	})
}

// TestSyncerConcurrentAdds: files added from many goroutines are each
// synced once by the time Wait returns.
func TestSyncerConcurrentAdds(t *testing.T) {
	log := watchSyncs(t)
	dir := t.TempDir()
	s := NewSyncer(context.Background(), 7, 3)
	var wg sync.WaitGroup
	var all [][]string
	for g := range 8 {
		paths := writeFiles(t, dir, fmt.Sprintf("g%d-", g), 25)
		all = append(all, paths)
		wg.Go(func() {
			for _, p := range paths {
				s.Add(p)
			}
		})
	}
	wg.Wait()
	if err := s.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, paths := range all {
		for _, p := range paths {
			if n := log.synced(p); n != 1 {
				t.Errorf("%s synced %d times, want once", p, n)
			}
		}
	}
	if n := log.synced(dir); n != 1 {
		t.Errorf("the directory synced %d times, want once", n)
	}
}

// TestSyncerErrors: a failed background sync is Wait's error, naming the
// file, and no more syncs start; a cancelled context fails Wait.
func TestSyncerErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log := watchSyncs(t)
		dir := t.TempDir()
		gone := filepath.Join(dir, "gone")
		s := NewSyncer(context.Background(), 2, 1)
		s.Add(gone)
		s.Add(filepath.Join(dir, "gone2"))
		synctest.Wait() // the background sync failed and is idle
		s.mu.Lock()
		for s.busy {
			s.idle.Wait()
		}
		s.mu.Unlock()
		late := writeFiles(t, dir, "late", 4)
		for _, p := range late {
			s.Add(p)
		}
		err := s.Wait(context.Background())
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "gone") {
			t.Errorf("Wait after a failed sync: %v, want an error naming the missing file", err)
		}
		for _, p := range late {
			if n := log.synced(p); n != 0 {
				t.Errorf("%s synced %d times after a sync failed, want none", p, n)
			}
		}

		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		c := NewSyncer(context.Background(), 100, 1)
		c.Add(late[0])
		if err := c.Wait(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("Wait on a cancelled context: %v", err)
		}
	})
}

// TestSyncerAfterWait: after a Wait that failed, the next Wait covers only
// the files added since, and succeeds.
func TestSyncerAfterWait(t *testing.T) {
	log := watchSyncs(t)
	dir := t.TempDir()
	s := NewSyncer(context.Background(), 100, 2)
	s.Add(filepath.Join(dir, "gone"))
	if err := s.Wait(context.Background()); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Wait with a missing file: %v", err)
	}
	paths := writeFiles(t, dir, "next", 3)
	for _, p := range paths {
		s.Add(p)
	}
	if err := s.Wait(context.Background()); err != nil {
		t.Fatalf("the next Wait: %v", err)
	}
	for _, p := range append(paths, dir) {
		if n := log.synced(p); n != 1 {
			t.Errorf("%s synced %d times, want once", p, n)
		}
	}
}
