// Package status is what one node tells of itself and of its shuffles:
// Info, one shuffle as the node sees it (the Flight action "info", GET
// /status), and Stats, a snapshot of the node's counters (GET /metrics).
// Both are plain values, filled by package service from its parts.
package status
