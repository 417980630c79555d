package admin

import (
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

// metric names with help text; "|shuffle" marks a per-shuffle label.
var metricHelp = map[string]string{
	"splitter_buffered_bytes":     "Send-buffer bytes buffered or in flight.",
	"splitter_peak_bytes":         "Highest send-buffer bytes seen.",
	"splitter_limit_bytes":        "Send-buffer budget.",
	"splitter_messages_total":     "Shard messages acknowledged by receivers.",
	"splitter_sent_bytes_total":   "Shard payload bytes acknowledged by receivers.",
	"splitter_retries_total":      "Sends retried (busy or transport errors).",
	"splitter_failures_total":     "Sends failed for good.",
	"spill_memory_bytes":          "Shard bytes held in memory by the receive store.",
	"spill_memory_limit_bytes":    "Receive store memory budget.",
	"spill_spilled_bytes_total":   "Bytes written to the badger spill store.",
	"spill_spilled_pieces_total":  "Pieces written to the badger spill store.",
	"spill_disk_live_bytes":       "Spilled bytes of live shuffles.",
	"spill_errors_total":          "Failed spill batches (disk errors).",
	"service_shuffles":            "Shuffles held by this node.",
	"dht_members":                 "Live cluster members seen by this node.",
	"dht_routing_table_peers":     "Peers in the kad-dht routing table.",
	"dht_requests_sent_total":     "Peer requests that got a reply.",
	"dht_requests_failed_total":   "Peer requests that failed in transport.",
	"dht_requests_served_total":   "Peer requests served.",
	"dht_sent_bytes_total":        "Peer request payload bytes sent.",
	"dht_received_bytes_total":    "Peer request payload bytes received.",
	"spill_shuffle_memory_bytes":  "Per shuffle: shard bytes in memory.",
	"spill_shuffle_spilled_bytes": "Per shuffle: shard bytes on disk.",
	"spill_shuffle_partitions":    "Per shuffle: output partitions holding data.",
}

func newCollector(src Source) *collector {
	c := &collector{src: src, descs: map[string]*prometheus.Desc{}}
	for name, help := range metricHelp {
		var labels []string
		if len(name) > 14 && name[:14] == "spill_shuffle_" {
			labels = []string{"shuffle"}
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
		"spill_memory_limit_bytes": float64(st.Store.MemoryLimit), "spill_disk_live_bytes": float64(st.Store.DiskBytesLive),
		"service_shuffles": float64(st.Shuffles),
	} {
		ch <- prometheus.MustNewConstMetric(c.descs[name], prometheus.GaugeValue, v)
	}
	for name, v := range map[string]float64{
		"splitter_messages_total": float64(st.Send.Messages), "splitter_sent_bytes_total": float64(st.Send.BytesSent),
		"splitter_retries_total": float64(st.Send.Retries), "splitter_failures_total": float64(st.Send.Failures),
		"spill_spilled_bytes_total": float64(st.Store.SpilledBytes), "spill_spilled_pieces_total": float64(st.Store.SpilledPieces),
		"spill_errors_total": float64(st.Store.SpillErrors),
	} {
		ch <- prometheus.MustNewConstMetric(c.descs[name], prometheus.CounterValue, v)
	}
	c.collectShuffles(ch, st)
	c.collectCluster(ch)
}

func (c *collector) collectShuffles(ch chan<- prometheus.Metric, st service.Stats) {
	for id, s := range st.Store.Shuffles {
		ch <- prometheus.MustNewConstMetric(c.descs["spill_shuffle_memory_bytes"], prometheus.GaugeValue, float64(s.MemoryBytes), id)
		ch <- prometheus.MustNewConstMetric(c.descs["spill_shuffle_spilled_bytes"], prometheus.GaugeValue, float64(s.SpilledBytes), id)
		ch <- prometheus.MustNewConstMetric(c.descs["spill_shuffle_partitions"], prometheus.GaugeValue, float64(s.Partitions), id)
	}
}

func (c *collector) collectCluster(ch chan<- prometheus.Metric) {
	if c.src.Cluster == nil {
		return
	}
	d := c.src.Cluster()
	ch <- prometheus.MustNewConstMetric(c.descs["dht_members"], prometheus.GaugeValue, float64(d.Members))
	ch <- prometheus.MustNewConstMetric(c.descs["dht_routing_table_peers"], prometheus.GaugeValue, float64(d.RoutingTablePeers))
	for name, v := range map[string]uint64{
		"dht_requests_sent_total": d.RequestsSent, "dht_requests_failed_total": d.RequestsFailed,
		"dht_requests_served_total": d.RequestsServed, "dht_sent_bytes_total": d.BytesSent,
		"dht_received_bytes_total": d.BytesReceived,
	} {
		ch <- prometheus.MustNewConstMetric(c.descs[name], prometheus.CounterValue, float64(v))
	}
}
