// Package admin serves a node's operational endpoints over HTTP:
//
//   - GET / (also /ui): an HTML status page: the node's shuffles with phase,
//     and on their coordinator task progress (done of total, committed),
//     rows and bytes put, nodes lost and tasks replayed, seal time; bytes
//     held in memory and spilled here; memory in use versus budget; the
//     members with the bytes exchanged with each. Server-rendered with
//     html/template (every value escaped), refreshed by a meta tag;
//   - GET /metrics: Prometheus text format, shufflenode_<component>_<what>_<unit>,
//     every sample labelled node, per-shuffle ones also shuffle;
//   - GET /status: JSON: the node, the members it sees, and every shuffle it
//     holds with its phase (and its progress on the coordinator);
//   - /debug/pprof/: Go profiles, only if Options.Pprof is set.
//
// Nothing here checks who asks: a node binds its admin address to loopback
// by default.
//
// Metrics are read from the components' Stats snapshots at scrape time, on a
// registry of the server's own (no process-wide state), so several nodes in
// one process each export their own. Handlers run on net/http's goroutines
// and only read snapshots; Close waits for the server to stop.
package admin
