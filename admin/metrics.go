package admin

import (
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/shufflenode/shufflenode/dht"
	"github.com/shufflenode/shufflenode/service"
)

// Source is what the admin server reads: a node's engine and cluster stats.
type Source struct {
	Service *service.Service
	Cluster func() dht.Stats
}

// collector turns Stats snapshots into metrics at scrape time.
type collector struct {
	src   Source
	descs map[string]*prometheus.Desc
}

// metricHelp maps metric names (without "shufflenode_") to help text. Names
// starting with one of labelPrefixes carry that label.
var metricHelp = map[string]string{
	"splitter_buffered_bytes":         "Send-buffer bytes buffered or in flight.",
	"splitter_peak_bytes":             "Highest send-buffer bytes seen.",
	"splitter_limit_bytes":            "Send-buffer budget.",
	"splitter_messages_total":         "Shard messages acknowledged by receivers.",
	"splitter_entries_total":          "Shard entries (one task's rows for one node) acknowledged by receivers.",
	"splitter_sent_bytes_total":       "Shard payload bytes acknowledged by receivers.",
	"splitter_retries_total":          "Sends retried (busy or transport errors).",
	"splitter_failures_total":         "Sends failed for good.",
	"spill_memory_bytes":              "Shard bytes held in memory by the receive store.",
	"spill_memory_pieces":             "Pieces held in memory by the receive store.",
	"spill_memory_limit_bytes":        "Receive store memory budget.",
	"spill_spilled_bytes_total":       "Bytes written to the badger spill store.",
	"spill_spilled_pieces_total":      "Pieces written to the badger spill store.",
	"spill_spills_total":              "Spill batches written to the badger spill store.",
	"spill_disk_live_bytes":           "Spilled bytes of live shuffles.",
	"spill_errors_total":              "Failed spill batches (disk errors).",
	"service_shuffles":                "Shuffles held by this node.",
	"offheap_mapped_bytes":            "Bytes mapped outside the Go heap for accumulated output partitions and chunks (process-wide, pooled bytes included; falls after a closed shuffle's next garbage collection, or once its pooled regions idle out).",
	"offheap_pooled_bytes":            "Bytes of freed shuffles' arenas this node keeps mapped for the next shuffles (--keep-regions).",
	"service_takeovers_total":         "Shuffles this node took over as the successor of a lost coordinator.",
	"service_op_memory_bytes":         "Memory the running node-side ops (joins, sorts) reserved.",
	"service_op_memory_limit_bytes":   "Budget for node-side ops' memory (--op-memory).",
	"service_ops_waiting":             "Node-side ops waiting for memory.",
	"service_last_takeover_seconds":   "Seconds the last takeover took, from its start to the barrier rebuilt (0 if none).",
	"dht_members":                     "Live cluster members seen by this node.",
	"dht_routing_table_peers":         "Peers in the kad-dht routing table.",
	"dht_requests_sent_total":         "Peer requests that got a reply.",
	"dht_requests_failed_total":       "Peer requests that failed in transport.",
	"dht_requests_served_total":       "Peer requests served.",
	"dht_busy_total":                  "Busy replies received from peers (receiver over budget).",
	"dht_refused_total":               "Refused replies received from peers.",
	"dht_sent_bytes_total":            "Peer request payload bytes sent.",
	"dht_received_bytes_total":        "Peer request payload bytes received.",
	"dht_busy_sent_total":             "Busy replies sent because the requests being received held the inbound byte bound.",
	"dht_peer_busy_sent_total":        "Per peer: busy replies sent to it for want of inbound bytes.",
	"service_shuffles_by_phase":       "Shuffles held by this node in each phase (open, sealed, failed).",
	"dht_peer_requests_sent_total":    "Per peer: requests to it that got a reply.",
	"dht_peer_requests_failed_total":  "Per peer: requests to it that failed in transport.",
	"dht_peer_requests_served_total":  "Per peer: requests from it served.",
	"dht_peer_busy_total":             "Per peer: busy replies from it.",
	"dht_peer_refused_total":          "Per peer: refused replies from it.",
	"dht_peer_sent_bytes_total":       "Per peer: request payload bytes sent to it.",
	"dht_peer_received_bytes_total":   "Per peer: request payload bytes received from it.",
	"spill_shuffle_memory_bytes":      "Per shuffle: shard bytes in memory.",
	"spill_shuffle_memory_pieces":     "Per shuffle: pieces in memory.",
	"spill_shuffle_spilled_bytes":     "Per shuffle: shard bytes on disk.",
	"spill_shuffle_spilled_pieces":    "Per shuffle: pieces on disk.",
	"spill_shuffle_partitions":        "Per shuffle: output partitions holding data.",
	"barrier_shuffle_tasks":           "Per shuffle, on its coordinator: input tasks.",
	"barrier_shuffle_tasks_done":      "Per shuffle, on its coordinator: tasks with a finished attempt.",
	"barrier_shuffle_tasks_committed": "Per shuffle, on its coordinator: finished tasks committed at all their receivers.",
	"barrier_shuffle_epoch":           "Per shuffle, on its coordinator: ownership epoch (grows by one per lost node).",
	"barrier_shuffle_sent_pieces":     "Per shuffle, on its coordinator: shards the finished tasks sent.",
	"barrier_shuffle_sent_rows":       "Per shuffle, on its coordinator: rows the finished tasks sent.",
	"barrier_shuffle_sent_bytes":      "Per shuffle, on its coordinator: payload bytes the finished tasks sent.",
	"barrier_shuffle_replayed_tasks":  "Per shuffle, on its coordinator: finished tasks lost nodes took with them (run again), over all losses.",
	"barrier_shuffle_seal_seconds":    "Per shuffle, on its coordinator: seconds from create to the announced seal (0 while not sealed).",
	"receiver_shuffle_read_bytes":     "Per shuffle: Arrow bytes read out of this node's output partitions (DoGets, peers' fetches, node-side ops).",
	"receiver_shuffle_read_rows":      "Per shuffle: rows read out of this node's output partitions (arrays: one per new chunk).",
	"receiver_shuffle_reads":          "Per shuffle: completed reads of this node's output partitions.",
}

// labelPrefixes maps a metric-name prefix to the label its metrics carry.
var labelPrefixes = map[string]string{
	"spill_shuffle_":            "shuffle",
	"barrier_shuffle_":          "shuffle",
	"receiver_shuffle_":         "shuffle",
	"service_shuffles_by_phase": "phase",
	"dht_peer_":                 "peer",
}

// phases are the values of the phase label, in service.Phase order.
var phases = []service.Phase{service.Open, service.Sealed, service.Failed}

func newCollector(src Source) *collector {
	c := &collector{src: src, descs: map[string]*prometheus.Desc{}}
	for name, help := range metricHelp {
		var labels []string
		for prefix, label := range labelPrefixes {
			if strings.HasPrefix(name, prefix) {
				labels = []string{label}
			}
		}
		c.descs[name] = prometheus.NewDesc("shufflenode_"+name, help, labels, prometheus.Labels{"node": src.Service.Name()})
	}
	return c
}

// Describe implements prometheus.Collector.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	st := c.src.Service.Stats()
	for name, v := range map[string]float64{
		"splitter_buffered_bytes": float64(st.Send.BufferedBytes), "splitter_peak_bytes": float64(st.Send.PeakBytes),
		"splitter_limit_bytes": float64(st.Send.LimitBytes), "spill_memory_bytes": float64(st.Store.MemoryBytes),
		"spill_memory_pieces": float64(st.Store.MemoryPieces), "spill_memory_limit_bytes": float64(st.Store.MemoryLimit),
		"spill_disk_live_bytes": float64(st.Store.DiskBytesLive), "service_shuffles": float64(st.Shuffles),
		"offheap_mapped_bytes": float64(st.MappedBytes), "offheap_pooled_bytes": float64(st.PooledBytes),
		"service_last_takeover_seconds": st.LastTakeoverTook.Seconds(), "service_op_memory_bytes": float64(st.OpMemory),
		"service_op_memory_limit_bytes": float64(st.OpMemoryLimit), "service_ops_waiting": float64(st.OpsWaiting),
	} {
		c.gauge(ch, name, v)
	}
	for name, v := range map[string]float64{
		"splitter_messages_total": float64(st.Send.Messages), "splitter_entries_total": float64(st.Send.Entries),
		"splitter_sent_bytes_total": float64(st.Send.BytesSent), "splitter_retries_total": float64(st.Send.Retries),
		"splitter_failures_total": float64(st.Send.Failures), "spill_spilled_bytes_total": float64(st.Store.SpilledBytes),
		"spill_spilled_pieces_total": float64(st.Store.SpilledPieces), "spill_spills_total": float64(st.Store.Spills),
		"spill_errors_total": float64(st.Store.SpillErrors), "service_takeovers_total": float64(st.Takeovers),
	} {
		ch <- prometheus.MustNewConstMetric(c.descs[name], prometheus.CounterValue, v)
	}
	c.collectStore(ch, st)
	c.collectShuffles(ch)
	c.collectCluster(ch)
}

// gauge sends one gauge sample of metric name.
func (c *collector) gauge(ch chan<- prometheus.Metric, name string, v float64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(c.descs[name], prometheus.GaugeValue, v, labels...)
}

// collectStore sends the receive store's per-shuffle figures.
func (c *collector) collectStore(ch chan<- prometheus.Metric, st service.Stats) {
	for id, s := range st.Store.Shuffles {
		c.gauge(ch, "spill_shuffle_memory_bytes", float64(s.MemoryBytes), id)
		c.gauge(ch, "spill_shuffle_memory_pieces", float64(s.MemoryPieces), id)
		c.gauge(ch, "spill_shuffle_spilled_bytes", float64(s.SpilledBytes), id)
		c.gauge(ch, "spill_shuffle_spilled_pieces", float64(s.SpilledPieces), id)
		c.gauge(ch, "spill_shuffle_partitions", float64(s.Partitions), id)
	}
}

// collectShuffles counts shuffles by phase and sends the coordinator's
// progress of the shuffles this node coordinates.
func (c *collector) collectShuffles(ch chan<- prometheus.Metric) {
	svc := c.src.Service
	byPhase := make([]int, len(phases))
	for _, id := range svc.Shuffles() {
		in, err := svc.Info(id)
		if err != nil {
			continue // closed meanwhile
		}
		if i := slices.Index(phases, in.Phase); i >= 0 {
			byPhase[i]++
		}
		c.gauge(ch, "receiver_shuffle_read_bytes", float64(in.Reads.Bytes), id)
		c.gauge(ch, "receiver_shuffle_read_rows", float64(in.Reads.Rows), id)
		c.gauge(ch, "receiver_shuffle_reads", float64(in.Reads.Reads), id)
		if p, err := svc.Progress(id); err == nil {
			c.collectProgress(ch, id, p)
		}
	}
	for i, p := range phases {
		c.gauge(ch, "service_shuffles_by_phase", float64(byPhase[i]), p.String())
	}
}

func (c *collector) collectProgress(ch chan<- prometheus.Metric, id string, p service.Progress) {
	for name, v := range map[string]float64{
		"barrier_shuffle_tasks": float64(p.Tasks), "barrier_shuffle_tasks_done": float64(p.TasksDone),
		"barrier_shuffle_tasks_committed": float64(p.TasksCommitted), "barrier_shuffle_epoch": float64(p.Epoch),
		"barrier_shuffle_sent_pieces": float64(p.Totals.Pieces), "barrier_shuffle_sent_rows": float64(p.Totals.Rows),
		"barrier_shuffle_sent_bytes": float64(p.Totals.Bytes), "barrier_shuffle_replayed_tasks": float64(p.ReplaySet),
		"barrier_shuffle_seal_seconds": p.SealAfter.Seconds(),
	} {
		c.gauge(ch, name, v, id)
	}
}

func (c *collector) collectCluster(ch chan<- prometheus.Metric) {
	if c.src.Cluster == nil {
		return
	}
	d := c.src.Cluster()
	c.gauge(ch, "dht_members", float64(d.Members))
	c.gauge(ch, "dht_routing_table_peers", float64(d.RoutingTablePeers))
	c.peerCounters(ch, "dht_", d.PeerStats)
	for peer, ps := range d.Peers {
		c.peerCounters(ch, "dht_peer_", ps, peer)
	}
}

// peerCounters sends the request counters of one peer (or all) as the
// metrics named prefix + what.
func (c *collector) peerCounters(ch chan<- prometheus.Metric, prefix string, d dht.PeerStats, labels ...string) {
	for name, v := range map[string]uint64{
		"requests_sent_total": d.RequestsSent, "requests_failed_total": d.RequestsFailed,
		"requests_served_total": d.RequestsServed, "busy_total": d.Busy, "refused_total": d.Refused,
		"sent_bytes_total": d.BytesSent, "received_bytes_total": d.BytesReceived, "busy_sent_total": d.BusySent,
	} {
		ch <- prometheus.MustNewConstMetric(c.descs[prefix+name], prometheus.CounterValue, float64(v), labels...)
	}
}
