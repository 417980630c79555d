package admin

import (
	"bytes"
	"html/template"
	"net/http"
	"strconv"
	"time"

	"github.com/shufflenode/shufflenode/dht"
)

// pageData is what the status page shows: the /status snapshot plus the
// members' addresses and the node's memory figures.
type pageData struct {
	Status  StatusReply
	Members []dht.Member
	// Send and Store are the in-use and budget bytes of the send buffers and
	// of the receive store's memory part; DiskLive is spilled bytes held.
	Send, Store memoryUse
	DiskLive    int64
	// Pprof is true when /debug/pprof/ is served.
	Pprof bool
	Time  string
	// Traffic is the peer-request bytes exchanged with each member, by
	// name (absent without cluster stats).
	Traffic map[string]dht.PeerStats
}

// memoryUse is one memory budget and how much of it is in use.
type memoryUse struct{ Used, Limit int64 }

// pageTemplate is the status page. html/template escapes every value for
// its context (text, attribute, URL).
var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{"bytes": formatBytes, "ubytes": func(n uint64) string { return formatBytes(int64(n)) }}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="5">
<title>shufflenode {{.Status.Node}}</title>
<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse;margin-bottom:1em}
td,th{border:1px solid #ccc;padding:.2em .6em;text-align:left}td.n{text-align:right}.failed{color:#b00}</style>
</head><body>
<h1>shufflenode {{.Status.Node}}</h1>
<p><a href="/metrics">/metrics</a> · <a href="/status">/status</a>{{if .Pprof}} · <a href="/debug/pprof/">/debug/pprof/</a>{{end}} · {{.Time}}, refreshed every 5 s</p>
<h2>Memory</h2>
<table><tr><th></th><th>in use</th><th>budget</th></tr>
<tr><td>send buffers</td><td class="n">{{bytes .Send.Used}}</td><td class="n">{{bytes .Send.Limit}}</td></tr>
<tr><td>received, in memory</td><td class="n">{{bytes .Store.Used}}</td><td class="n">{{bytes .Store.Limit}}</td></tr>
<tr><td>received, spilled to disk</td><td class="n">{{bytes .DiskLive}}</td><td></td></tr>
</table>
<h2>Shuffles ({{len .Status.Shuffles}})</h2>
{{- if .Status.Shuffles}}
<table><tr><th>shuffle</th><th>phase</th><th>coordinator</th><th>tasks</th><th>partitions</th><th>put in (rows, bytes)</th><th>nodes lost / tasks replayed</th><th>in memory here</th><th>spilled here</th><th>read out of here (reads, rows, bytes)</th><th>error</th></tr>
{{- range .Status.Shuffles}}
<tr><td>{{.ID}}</td><td class="{{.Phase}}">{{.Phase}}{{with .Progress}}{{if .SealSeconds}} in {{printf "%.1f" .SealSeconds}} s{{end}}{{end}}</td><td>{{.Coordinator}}</td>
<td>{{if eq .Coordinator $.Status.Node}}<progress max="{{.Tasks}}" value="{{.TasksDone}}"></progress> {{.TasksDone}} / {{.Tasks}}{{with .Progress}}, {{.TasksCommitted}} committed{{end}}{{else}}{{.Tasks}} tasks (progress: see the coordinator){{end}}</td>
<td class="n">{{.Partitions}}</td>
{{- with .Progress}}<td class="n">{{.Rows}} rows, {{ubytes .Bytes}}</td><td class="n">{{.Epoch}} / {{.Replayed}}</td>{{else}}<td></td><td></td>{{end}}
<td class="n">{{bytes .MemoryBytes}}</td><td class="n">{{bytes .SpillBytes}}</td>
<td class="n">{{.Reads}}, {{.RowsOut}} rows, {{bytes .BytesOut}}</td><td class="failed">{{.Error}}</td></tr>
{{- end}}
</table>
{{- else}}
<p>No shuffles on this node.</p>
{{- end}}
<h2>Members ({{len .Members}})</h2>
<table><tr><th>name</th><th>client API</th><th>gossip</th><th>sent to it</th><th>received from it</th><th>peer ID</th></tr>
{{- range .Members}}
<tr><td>{{.Name}}</td><td>{{.APIAddr}}</td><td>{{.GossipAddr}}</td>
{{- if $.Traffic}}{{with index $.Traffic .Name}}<td class="n">{{ubytes .BytesSent}}</td><td class="n">{{ubytes .BytesReceived}}</td>{{end}}{{else}}<td></td><td></td>{{end}}
<td>{{.PeerID}}</td></tr>
{{- end}}
</table>
</body></html>
`))

// page serves the HTML status page.
func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	st := s.src.Service.Stats()
	d := pageData{Status: s.snapshot(), Members: s.src.Service.Members(),
		Send:     memoryUse{st.Send.BufferedBytes, st.Send.LimitBytes},
		Store:    memoryUse{st.Store.MemoryBytes, st.Store.MemoryLimit},
		DiskLive: st.Store.DiskBytesLive, Pprof: s.opts.Pprof, Time: time.Now().UTC().Format(time.RFC3339)}
	if s.src.Cluster != nil {
		d.Traffic = s.src.Cluster().Peers
	}
	writePage(w, d)
}

// writePage renders d, or answers 500 if rendering fails (nothing is sent
// before the whole page is rendered).
func writePage(w http.ResponseWriter, d pageData) {
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, d); err != nil {
		http.Error(w, "admin: rendering the status page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b.Bytes())
}

// formatBytes prints n with a binary unit ("1.5 GiB").
func formatBytes(n int64) string {
	f := float64(n)
	for _, u := range []string{"B", "KiB", "MiB", "GiB"} {
		if f < 1024 || u == "GiB" {
			return strconv.FormatFloat(f, 'f', 1, 64) + " " + u
		}
		f /= 1024
	}
	return ""
}
