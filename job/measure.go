package job

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Usage is what a process or a run used: wall time, CPU time (user and
// system) and peak resident set size (VmHWM).
type Usage struct {
	Seconds    float64
	CPUSeconds float64
	PeakRSS    int64
}

// Meter measures a run of this process: it resets the peak RSS when it
// starts, so Stop reports the run's own peak.
type Meter struct {
	start time.Time
	cpu0  float64
}

// StartMeter resets this process's peak RSS and starts the clock.
func StartMeter() *Meter {
	ResetPeakRSS()
	return &Meter{start: time.Now(), cpu0: selfCPU()}
}

// Stop reports the time, CPU and peak RSS since StartMeter.
func (m *Meter) Stop() Usage {
	return Usage{Seconds: time.Since(m.start).Seconds(), CPUSeconds: selfCPU() - m.cpu0, PeakRSS: PeakRSS()}
}

// PeakRSS returns this process's peak resident set size (VmHWM), or 0.
func PeakRSS() int64 { return procHWM("self") }

// ResetPeakRSS resets VmHWM (Linux 4.0+) so the next PeakRSS measures from
// now.
func ResetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// resetPeakRSSOf resets VmHWM of process pid (the kernel allows it for
// this user's processes).
func resetPeakRSSOf(pid int) error {
	return os.WriteFile("/proc/"+strconv.Itoa(pid)+"/clear_refs", []byte("5"), 0)
}

// ProcUsage reports the CPU seconds and peak RSS of process pid so far
// (Linux /proc); zero values when it cannot be read.
func ProcUsage(pid int) Usage {
	id := strconv.Itoa(pid)
	return Usage{CPUSeconds: procCPU(id), PeakRSS: procHWM(id)}
}

// selfCPU is this process's user+system CPU time in seconds.
func selfCPU() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// procHWM reads VmHWM of /proc/ID/status.
func procHWM(id string) int64 {
	b, err := os.ReadFile("/proc/" + id + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's times (100 on every
// Linux architecture Go supports).
const clockTicks = 100

// procCPU reads utime+stime of /proc/ID/stat, in seconds.
func procCPU(id string) float64 {
	b, err := os.ReadFile("/proc/" + id + "/stat")
	if err != nil {
		return 0
	}
	// Fields after the command (which may hold spaces) close with ')'.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return float64(ut+st) / clockTicks
}
