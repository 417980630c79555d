// Package admin serves a node's operational endpoints over HTTP:
//
//   - GET /metrics: Prometheus text format, shufflenode_<component>_<what>_<unit>;
//   - GET /status: JSON: the node, the members it sees, and every shuffle it
//     holds with its phase;
//   - /debug/pprof/: Go profiles.
//
// Metrics are read from the components' Stats snapshots at scrape time, on a
// registry of the server's own (no process-wide state), so several nodes in
// one process each export their own.
package admin
