package recovery

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestLossScenarios runs each script under testdata/loss/*.txt against the
// replay and takeover rules (a shuffle's finished tasks, losses of
// receivers, attempts a takeover infers) and compares the decisions with
// the script's golden file (-update rewrites them).
func TestLossScenarios(t *testing.T) { runGoldens(t, "testdata/loss/*.txt", runLossScript) }

// lossTask is one task of a loss script: its finished attempt's receipts by
// receiver, or pending (nil) once a loss replays it.
type lossTask struct {
	receivers []string
	receipts  []Receipt
	partial   bool // pending with a replay that may send only what moved
}

// lossSim is the state a loss script works on.
type lossSim struct {
	t          *testing.T
	out        strings.Builder
	replicated bool
	live       []string
	losses     int
	tasks      map[int]*lossTask
}

func runLossScript(t *testing.T, script string) string {
	s := &lossSim{t: t, tasks: map[int]*lossTask{}}
	for _, line := range strings.Split(script, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fmt.Fprintf(&s.out, "> %s\n", line)
		s.run(strings.Fields(line))
	}
	return s.out.String()
}

func (s *lossSim) logf(format string, args ...any) { fmt.Fprintf(&s.out, "  "+format+"\n", args...) }

func (s *lossSim) run(f []string) {
	switch f[0] {
	case "shuffle": // shuffle replicated|plain RECEIVER...
		s.replicated, s.live = f[1] == "replicated", f[2:]
	case "task": // task N R=FLAGS...: its finished attempt (d: data, c: committed, -: neither)
		s.finish(s.num(f[1]), f[2:])
	case "commit": // commit N R: R reports committing task N's finished attempt
		s.commit(s.num(f[1]), f[2])
	case "lose": // lose R: R is lost; the first loss of a replicated shuffle is absorbed
		s.lose(f[1])
	case "handover": // handover R: R leaves on purpose and hands over what it committed
		s.handOver(f[1])
	case "fallback": // fallback R: R's handover failed: what it held replays as after its loss
		s.fallBack(f[1])
	case "attempt": // attempt T/A R=FLAGS...: a takeover's witnesses (live|lost, committed, owned)
		s.infer(f[1], f[2:])
	case "state":
		s.state()
	default:
		s.t.Fatalf("unknown command %q", f[0])
	}
}

func (s *lossSim) num(a string) int {
	n, err := strconv.Atoi(a)
	if err != nil {
		s.t.Fatalf("bad number %q", a)
	}
	return n
}

// pairs splits R=FLAGS arguments.
func (s *lossSim) pairs(args []string) (names, flags []string) {
	for _, a := range args {
		n, fl, ok := strings.Cut(a, "=")
		if !ok {
			s.t.Fatalf("want R=FLAGS, got %q", a)
		}
		names, flags = append(names, n), append(flags, fl)
	}
	return names, flags
}

func (s *lossSim) finish(task int, args []string) {
	names, flags := s.pairs(args)
	ts := &lossTask{receivers: names}
	for _, fl := range flags {
		ts.receipts = append(ts.receipts, Receipt{Data: strings.Contains(fl, "d"), Committed: strings.Contains(fl, "c")})
	}
	s.tasks[task] = ts
}

func (s *lossSim) commit(task int, r string) {
	ts := s.tasks[task]
	if p := slices.Index(ts.receivers, r); ts.receipts != nil && p >= 0 {
		ts.receipts[p].Committed = true
	}
}

func (s *lossSim) lose(lost string) {
	s.losses++
	s.live = slices.DeleteFunc(s.live, func(n string) bool { return n == lost })
	absorbed := Absorbed(s.replicated, s.losses)
	s.logf("loss %d of a %s shuffle: absorbed %v", s.losses, map[bool]string{true: "replicated", false: "plain"}[s.replicated], absorbed)
	for _, task := range slices.Sorted(maps.Keys(s.tasks)) {
		ts := s.tasks[task]
		if ts.receipts == nil {
			continue
		}
		p := slices.Index(ts.receivers, lost)
		var r Receipt
		if p >= 0 {
			r = ts.receipts[p]
		}
		e := OnLoss(p >= 0, r)
		if absorbed {
			e = OnExcuse(p >= 0, r)
		}
		s.apply(task, ts, p, e)
	}
}

func (s *lossSim) handOver(node string) {
	s.live = slices.DeleteFunc(s.live, func(n string) bool { return n == node })
	s.logf("handover of %s", node)
	s.each(node, OnHandOver)
}

func (s *lossSim) fallBack(node string) {
	s.logf("handover of %s failed: loss path", node)
	s.each(node, OnLoss)
}

// each applies effect to every finished task for receiver node.
func (s *lossSim) each(node string, effect func(bool, Receipt) LossEffect) {
	for _, task := range slices.Sorted(maps.Keys(s.tasks)) {
		ts := s.tasks[task]
		if ts.receipts == nil {
			continue
		}
		p := slices.Index(ts.receivers, node)
		var r Receipt
		if p >= 0 {
			r = ts.receipts[p]
		}
		s.apply(task, ts, p, effect(p >= 0, r))
	}
}

func (s *lossSim) apply(task int, ts *lossTask, p int, e LossEffect) {
	switch e {
	case Replay:
		ts.partial = PartialReplay(len(ts.receipts), p, func(i int) Receipt { return ts.receipts[i] })
		ts.receipts = nil
		s.logf("task %d: replay (%s)", task, map[bool]string{true: "only what moved", false: "everything"}[ts.partial])
	case Excused:
		ts.receipts[p].Committed = true
		s.logf("task %d: excused", task)
	}
}

func (s *lossSim) infer(attempt string, args []string) {
	names, flags := s.pairs(args)
	ws := make([]Witness, len(flags))
	for i, fl := range flags {
		ws[i] = Witness{Live: strings.Contains(fl, "live"), Committed: strings.Contains(fl, "committed"), Owned: strings.Contains(fl, "owned")}
	}
	if !Committed(len(ws), func(p int) Witness { return ws[p] }) {
		s.logf("attempt %s: not finished (a live receiver did not commit)", attempt)
		return
	}
	var sent []string
	for i, w := range ws {
		sent = append(sent, names[i]+"="+InferSent(w).String())
	}
	s.logf("attempt %s: finished; sent %s", attempt, strings.Join(sent, " "))
}

func (s *lossSim) state() {
	s.logf("live %s", strings.Join(s.live, " "))
	for _, task := range slices.Sorted(maps.Keys(s.tasks)) {
		ts := s.tasks[task]
		if ts.receipts == nil {
			s.logf("task %d: pending (replay sends %s)", task, map[bool]string{true: "only what moved", false: "everything"}[ts.partial])
			continue
		}
		var rs []string
		for i, r := range ts.receipts {
			fl := ""
			if r.Data {
				fl += "d"
			}
			if r.Committed {
				fl += "c"
			}
			rs = append(rs, ts.receivers[i]+"="+cmp.Or(fl, "-"))
		}
		s.logf("task %d: finished %s", task, strings.Join(rs, " "))
	}
}
