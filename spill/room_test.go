package spill

import (
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// TestWriteBatchChecksRoom: a write the file system has no room for (its bytes and badger's
// margin) fails with ENOSPC before badger maps anything; one that fits is written.
func TestWriteBatchChecksRoom(t *testing.T) {
	d, err := openBadger(t.TempDir(), 16<<20, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	free := roomMargin(16<<20) + 10<<10
	d.free = func(string) (int64, error) { return free, nil }
	small := []Entry{{Key: []byte("a"), Value: make([]byte, 4<<10)}}
	if err := d.WriteBatch(small); err != nil {
		t.Fatalf("a write that fits: %v", err)
	}
	big := []Entry{{Key: []byte("b"), Value: make([]byte, 64<<10)}}
	if err := d.WriteBatch(big); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("a write past the free room: %v, want ENOSPC", err)
	}
	free = 0
	d2, err := openBadger(t.TempDir(), 16<<20, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	d2.free = d.free
	if err := d2.WriteBatch(small); !errors.Is(err, syscall.ENOSPC) || d2.opened() != nil {
		t.Fatalf("first write on a full disk: %v (badger opened: %v), want ENOSPC before opening", err, d2.opened() != nil)
	}
}

// TestSpillToFullTmpfs fills a real 40 MiB tmpfs: Puts whose spill does not fit fail with
// ErrDisk and ENOSPC naming shuffle and node (badger, writing through memory mappings, took
// the process down with SIGBUS), and dropping the shuffle gives the space back. It needs root
// to mount the tmpfs.
func TestSpillToFullTmpfs(t *testing.T) {
	dir := mountTmpfs(t, "40m")
	r := &faultRun{t: t, log: newReleaseLog(t), want: map[string]map[uint32][]got{}}
	r.s = openStore(t, Config{Dir: filepath.Join(dir, "spill"), MemoryLimit: 4 << 20, SpillChunk: 1 << 20, Node: "node-3"})
	for range 600 {
		r.put("victim", 128<<10) // 75 MiB in all
	}
	if r.failed == 0 {
		t.Fatal("every Put of 75 MiB fit in 4 MiB of memory and a 40 MiB disk")
	}
	used := usedBytes(t, dir)
	t.Logf("%d of 600 Puts failed; %d MiB of the tmpfs used", r.failed, used>>20)
	if err := r.s.DropShuffle("victim"); err != nil {
		t.Fatal(err)
	}
	if after := usedBytes(t, dir); after > 1<<20 {
		t.Errorf("after the drop %d KiB of the tmpfs stay used (before: %d KiB)", after>>10, used>>10)
	}
}

// mountTmpfs mounts a tmpfs of size under a new temporary directory, or skips without root.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	return dir
}

// usedBytes is what the file system of dir has in use.
func usedBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Blocks-st.Bfree) * int64(st.Bsize)
}
