package bench

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/shufflenode/shufflenode/offheap"
)

// touchStride is the step of a first-touch ceiling's writes: one byte per
// 4 KiB page, so that each write is a page's first touch and nothing else.
const touchStride = 4096

// FirstTouchCeilings measures what memory the process touches for the first
// time costs, over bytes: a fresh anonymous mapping written one byte per 4
// KiB page, once with the kernel's 4 KiB pages (as the Go heap gets them)
// and once advised as transparent huge pages (as the offheap arenas that
// hold received partitions and chunks ask for them). The cost is the
// kernel's zeroing and mapping of each page and, under a hypervisor that
// takes freed guest memory back (free page reporting, which reports free
// blocks of 2 MiB and more), the host's backing it again. On this project's
// virtual machines memory the host took back cost 2.2-2.8 s per GiB in
// either page size, memory the guest still held (recently freed, or free
// only in pieces smaller than 2 MiB, which 4 KiB pages are taken from
// first: 1.2 GiB of them in one measurement) 0.1-0.5 s, so the jobs'
// times move with what the host holds. Measure it after the jobs: the
// pages a ceiling frees are warm for whatever touches memory next.
func FirstTouchCeilings(bytes int64) ([]Ceiling, error) {
	small, err := firstTouch(bytes, false)
	if err != nil {
		return nil, err
	}
	huge, err := firstTouch(bytes, true)
	if err != nil {
		return nil, err
	}
	hugeName := "memory: first touch, huge pages"
	if !hugePagesOnRequest() {
		hugeName = "memory: first touch, no huge pages here"
	}
	return []Ceiling{
		{Name: "memory: first touch, 4 KiB pages", Bytes: bytes, Seconds: small.Seconds()},
		{Name: hugeName, Bytes: bytes, Seconds: huge.Seconds()},
	}, nil
}

// firstTouch maps bytes of fresh memory as offheap's arenas do (huge) or in
// 4 KiB pages, touches every page and unmaps it; it returns the time of
// the touches.
func firstTouch(bytes int64, huge bool) (time.Duration, error) {
	b, err := offheap.MapFresh(int(bytes), huge)
	if err != nil {
		return 0, fmt.Errorf("job: first-touch ceiling: %w", err)
	}
	defer offheap.Unmap(b)
	return touchPages(b), nil
}

// hugePagesOnRequest reports whether the kernel gives transparent huge
// pages to a mapping advised for them (mode "always" or "madvise").
func hugePagesOnRequest() bool {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	return err == nil && (strings.Contains(string(b), "[always]") || strings.Contains(string(b), "[madvise]"))
}

// touchPages writes one byte per page of b and returns how long that took.
func touchPages(b []byte) time.Duration {
	start := time.Now()
	for i := 0; i < len(b); i += touchStride {
		b[i] = 1
	}
	return time.Since(start)
}

// HugeFaults returns how many transparent huge pages the kernel has
// faulted in since boot, in every process (Linux /proc/vmstat
// thp_fault_alloc; 0 where it cannot be read). A difference over a run on
// a machine that runs nothing else is the run's: the huge pages it touched
// for the first time, 2 MiB each.
func HugeFaults() int64 {
	b, err := os.ReadFile("/proc/vmstat")
	if err != nil {
		return 0
	}
	return hugeFaultsIn(string(b))
}

// hugeFaultsIn reads thp_fault_alloc from the text of /proc/vmstat.
func hugeFaultsIn(vmstat string) int64 {
	for _, line := range strings.Split(vmstat, "\n") {
		if v, ok := strings.CutPrefix(line, "thp_fault_alloc "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

// freshMemory is the memory a job touched for the first time, as its page
// faults count it.
type freshMemory struct {
	smallFaults, hugeFaults int64
}

// seconds estimates what the touches cost at the first-touch ceilings'
// rates: 4 KiB faults at the 4 KiB ceiling's, huge ones at the huge pages'.
// It is an estimate: a job's pages may be warmer or colder than the
// ceilings' were, and a minor fault is not always a first touch.
func (f freshMemory) seconds(small, huge Ceiling) float64 {
	return float64(f.smallFaults*touchStride)/float64(small.Bytes)*small.Seconds +
		float64(f.hugeFaults*offheap.HugePageBytes)/float64(huge.Bytes)*huge.Seconds
}
