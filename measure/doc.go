// Package measure reports what a run or a process used, from Linux's
// getrusage and /proc: wall time, CPU time (user and system), peak resident
// set size (VmHWM) and minor page faults.
//
// StartMeter resets this process's peak RSS and Meter.Stop reports the run
// since; Self is this process's usage so far, ProcUsage another process's,
// PeakRSS this process's peak. Elsewhere than Linux the /proc figures read
// as zero. The jobs print PeakRSS in their reports; package bench measures
// every job with a Meter and the serve processes it starts with ProcUsage.
//
// ResetPeakRSS and ResetPeakRSSOf write /proc/PID/clear_refs: they change
// what the kernel reports for that process, so only a command's entry
// point or a benchmark calls them.
package measure
