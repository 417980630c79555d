package measure

import (
	"os"
	"runtime"
	"syscall"
	"testing"
)

// TestMeterCountsFaults: memory touched for the first time between
// StartMeter and Stop shows as that many minor faults (4 KiB pages: the
// mapping is kept from huge pages), and /proc's count for this process is
// getrusage's (the field ProcUsage reads is minflt).
func TestMeterCountsFaults(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("minor faults are read from Linux's /proc")
	}
	const size, page = 16 << 20, 4 << 10
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	_ = syscall.Madvise(mem, 15) // MADV_NOHUGEPAGE: one fault per 4 KiB page
	m := StartMeter()
	for i := 0; i < size; i += page {
		mem[i] = 1
	}
	u := m.Stop()
	if want := int64(size / page); u.MinorFaults < want {
		t.Errorf("%d minor faults for %d pages touched for the first time", u.MinorFaults, want)
	}
	before := Self().MinorFaults
	proc := ProcUsage(os.Getpid()).MinorFaults
	after := Self().MinorFaults
	if proc < before || proc > after {
		t.Errorf("/proc says %d minor faults, getrusage %d before and %d after", proc, before, after)
	}
}
