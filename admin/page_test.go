package admin

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/shufflenode/shufflenode/dht"
)

// TestPageEscapes renders hostile text in every field a peer or a failure
// can fill and checks none of it reaches the page unescaped.
func TestPageEscapes(t *testing.T) {
	const evil = `<script>x("&")</script>`
	d := pageData{
		Status: StatusReply{Node: evil, Shuffles: []ShuffleStatus{{ID: "s" + evil, Phase: `failed" onclick="x`,
			Coordinator: evil, Tasks: 4, Error: evil}}},
		Members: []dht.Member{{Name: evil, APIAddr: evil, GossipAddr: evil, PeerID: evil}},
	}
	rec := httptest.NewRecorder()
	writePage(rec, d)
	body := rec.Body.String()
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("code %d, content type %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	for _, bad := range []string{"<script>", `" onclick="`} {
		if strings.Contains(body, bad) {
			t.Errorf("page contains %q unescaped:\n%s", bad, body)
		}
	}
	if n := strings.Count(body, "&lt;script&gt;"); n < 8 {
		t.Errorf("escaped value shown %d times, want >= 8 (title, heading, shuffle, coordinator, error, 4 member fields)", n)
	}
}

// TestPageProgress checks which shuffles get a progress bar: only those
// this node coordinates (TasksDone is known there only).
func TestPageProgress(t *testing.T) {
	d := pageData{Pprof: true, Status: StatusReply{Node: "a", Shuffles: []ShuffleStatus{
		{ID: "mine", Phase: "open", Coordinator: "a", Tasks: 8, TasksDone: 3},
		{ID: "theirs", Phase: "open", Coordinator: "b", Tasks: 5},
	}}}
	rec := httptest.NewRecorder()
	writePage(rec, d)
	body := rec.Body.String()
	for _, want := range []string{`<progress max="8" value="3"></progress> 3 / 8`, "5 tasks (progress: see the coordinator)",
		`<a href="/metrics">`, `<a href="/status">`, `<a href="/debug/pprof/">`, `http-equiv="refresh"`} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Count(body, "<progress") != 1 {
		t.Errorf("want one progress bar:\n%s", body)
	}
}

func TestFormatBytes(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{{0, "0.0 B"}, {1023, "1023.0 B"}, {1536, "1.5 KiB"}, {5 << 20, "5.0 MiB"}, {3 << 40, "3072.0 GiB"}} {
		if got := formatBytes(c.n); got != c.want {
			t.Errorf("formatBytes(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

// TestPageShuffleProgress checks the coordinator's figures of a shuffle
// (rows and bytes put, commits, lost nodes and replays, seal time) and the
// bytes exchanged with each member.
func TestPageShuffleProgress(t *testing.T) {
	d := pageData{Status: StatusReply{Node: "a", Shuffles: []ShuffleStatus{
		{ID: "mine", Phase: "sealed", Coordinator: "a", Tasks: 8, TasksDone: 8, SpillBytes: 3 << 20, Reads: 4, RowsOut: 617, BytesOut: 3 << 10,
			Progress: &ShuffleProgress{TasksCommitted: 7, Epoch: 1, Rows: 1234, Bytes: 5 << 20, Replayed: 2, SealSeconds: 1.25}},
		{ID: "theirs", Phase: "open", Coordinator: "b", Tasks: 5},
	}},
		Members: []dht.Member{{Name: "a"}, {Name: "b"}},
		Traffic: map[string]dht.PeerStats{"b": {BytesSent: 2048, BytesReceived: 1 << 20}},
	}
	rec := httptest.NewRecorder()
	writePage(rec, d)
	body := rec.Body.String()
	for _, want := range []string{"sealed in 1.2 s", "8 / 8, 7 committed", "1234 rows, 5.0 MiB", `<td class="n">1 / 2</td>`,
		"3.0 MiB", `<td class="n">4, 617 rows, 3.0 KiB</td>`, `<td class="n">2.0 KiB</td><td class="n">1.0 MiB</td>`, `<td class="n">0.0 B</td><td class="n">0.0 B</td>`} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q:\n%s", want, body)
		}
	}
}
