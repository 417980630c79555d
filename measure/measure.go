package measure

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Usage is what a process or a run used: wall time, CPU time (user and
// system), peak resident set size (VmHWM) and minor page faults.
type Usage struct {
	Seconds    float64
	CPUSeconds float64
	PeakRSS    int64
	// MinorFaults counts the pages the kernel mapped in without I/O: on
	// Linux nearly all of them memory touched for the first time (or again
	// after the process gave it back), each a page the kernel clears. It
	// varies far less from run to run than time does, and on a VM that
	// hands freed memory back to its host, as this project's machine does,
	// each fault costs more than clearing a page (about 1 CPU s per GiB).
	MinorFaults int64
}

// Sub returns u less v: the usage between two snapshots (peak RSS is u's).
func (u Usage) Sub(v Usage) Usage {
	return Usage{Seconds: u.Seconds - v.Seconds, CPUSeconds: u.CPUSeconds - v.CPUSeconds, PeakRSS: u.PeakRSS, MinorFaults: u.MinorFaults - v.MinorFaults}
}

// Meter measures a run of this process: it resets the peak RSS when it
// starts, so Stop reports the run's own peak.
type Meter struct {
	start time.Time
	u0    Usage
}

// StartMeter resets this process's peak RSS and starts the clock.
func StartMeter() *Meter {
	ResetPeakRSS()
	return &Meter{start: time.Now(), u0: Self()}
}

// Stop reports the time, CPU, peak RSS and faults since StartMeter.
func (m *Meter) Stop() Usage {
	u := Self().Sub(m.u0)
	u.Seconds, u.PeakRSS = time.Since(m.start).Seconds(), PeakRSS()
	return u
}

// PeakRSS returns this process's peak resident set size (VmHWM), or 0.
func PeakRSS() int64 { return procHWM("self") }

// ResetPeakRSS resets VmHWM (Linux 4.0+) so the next PeakRSS measures from
// now.
func ResetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// ResetPeakRSSOf resets VmHWM of process pid (the kernel allows it for
// this user's processes).
func ResetPeakRSSOf(pid int) error {
	return os.WriteFile("/proc/"+strconv.Itoa(pid)+"/clear_refs", []byte("5"), 0)
}

// ProcUsage reports the CPU seconds and peak RSS of process pid so far
// (Linux /proc); zero values when it cannot be read.
func ProcUsage(pid int) Usage {
	id := strconv.Itoa(pid)
	cpu, faults := procStat(id)
	return Usage{CPUSeconds: cpu, PeakRSS: procHWM(id), MinorFaults: faults}
}

// Self is this process's user+system CPU time and minor faults so
// far (not its peak RSS: every caller takes a difference, and the peak
// after a ResetPeakRSS is Meter.Stop's to read).
func Self() Usage {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return Usage{}
	}
	return Usage{CPUSeconds: float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9, MinorFaults: ru.Minflt}
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

// procStat reads utime+stime (in seconds) and minflt of /proc/ID/stat.
func procStat(id string) (cpu float64, minflt int64) {
	b, err := os.ReadFile("/proc/" + id + "/stat")
	if err != nil {
		return 0, 0
	}
	// Fields after the command (which may hold spaces) close with ')'.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, 0
	}
	minflt, _ = strconv.ParseInt(f[7], 10, 64)
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return float64(ut+st) / clockTicks, minflt
}
