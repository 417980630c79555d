package integration

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shufflenode/shufflenode/job"
)

// TestHostileFullSpillDisk: a node whose spill directory sits on a 48 MiB
// tmpfs receives more than fits. The job fails with the disk error, naming
// it, instead of the node dying of SIGBUS in badger's mapped value log; the
// node stays up, and the space comes back once the client closes the
// failed shuffle. Needs
// root (mount).
func TestHostileFullSpillDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs for the spill directory needs root")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", mnt).Run() })
	c := startProcsArgs(t, 2, func(i int) []string {
		args := []string{"--memory-limit", "32MiB"}
		if i == 1 {
			args = append(args, "--data-dir", filepath.Join(mnt, "proc-1"))
		}
		return args
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, err := job.RunDemo(ctx, c.apis(), job.DemoConfig{ID: "full-disk", Rows: 2_000_000, Tasks: 8, Partitions: 8, PayloadBytes: 100, Seed: 1})
	if err == nil {
		t.Fatal("a shuffle of ~230 MB with 48 MiB of spill disk on one node finished")
	}
	t.Logf("job: %v", err)
	if msg := err.Error(); !strings.Contains(msg, "disk") && !strings.Contains(msg, "no space") {
		t.Errorf("the job's error does not name the disk: %v", err)
	}
	for _, p := range c.procs {
		if !p.alive() {
			t.Fatalf("%s died:\n%s", p.name, tail(p.log, 20))
		}
	}
	cl, err := c.procs[0].dial()
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.CloseShuffle(ctx, "full-disk"); err != nil {
		t.Fatalf("closing the failed shuffle: %v", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var st syscall.Statfs_t
		if err := syscall.Statfs(mnt, &st); err != nil {
			t.Fatal(err)
		}
		used := int64(st.Blocks-st.Bfree) * int64(st.Bsize)
		if used < 2<<20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d MiB of the spill disk stay used after the failed shuffle was closed", used>>20)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
