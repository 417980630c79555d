package recovery

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestScenarios runs each script under testdata/*.txt against a cluster of
// cores (one node's state per member, a network that can split and
// freeze nodes) and compares what every node decided with the script's
// golden file (testdata/*.golden; -update rewrites them).
func TestScenarios(t *testing.T) { runGoldens(t, "testdata/*.txt", runScript) }

// runGoldens runs run on each script that pattern matches and compares its
// output with the script's golden file (the .txt's .golden twin), or with
// -update rewrites the golden file.
func runGoldens(t *testing.T, pattern string, run func(t *testing.T, script string) string) {
	scripts, err := filepath.Glob(pattern)
	if err != nil || len(scripts) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, path := range scripts {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			script, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got := run(t, string(script))
			golden := strings.TrimSuffix(path, ".txt") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from %s:\n%s", path, golden, lineDiff(string(want), got))
			}
		})
	}
}

// lineDiff lists the lines of want and got that differ, by line number.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := range max(len(w), len(g)) {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n  want %q\n  got  %q\n", i+1, wl, gl)
		}
	}
	return b.String()
}

// simNode is one member's state of the shuffle.
type simNode struct {
	name         string
	held         bool // it holds the shuffle (false once dropped or restarted)
	closed       bool // it freed the shuffle on its client's close
	lost         []string
	coordinating bool
	down         map[string]bool
}

// cluster is the members of one shuffle and the network between them.
type cluster struct {
	t       *testing.T
	out     strings.Builder
	cands   []string
	members []string
	nodes   map[string]*simNode
	side    map[string]int // partition side of each node (0 when whole)
	frozen  map[string]bool
	onPing  map[string][]string // commands run when the node next pings
}

// runScript runs a scenario and returns its transcript.
func runScript(t *testing.T, script string) string {
	c := &cluster{t: t, nodes: map[string]*simNode{}, side: map[string]int{}, frozen: map[string]bool{}, onPing: map[string][]string{}}
	for line := range strings.SplitSeq(script, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fmt.Fprintf(&c.out, "> %s\n", line)
		c.run(strings.Fields(line))
	}
	return c.out.String()
}

// logf adds a line to the transcript.
func (c *cluster) logf(format string, args ...any) { fmt.Fprintf(&c.out, "  "+format+"\n", args...) }

// run runs one command.
func (c *cluster) run(f []string) {
	switch f[0] {
	case "shuffle": // shuffle ID CREATOR MEMBER...
		c.create(f[1], f[2], f[3:])
	case "split": // split A B | C D
		c.split(f[1:])
	case "heal":
		c.side = map[string]int{}
	case "freeze":
		c.frozen[f[1]] = true
	case "thaw":
		delete(c.frozen, f[1])
	case "see": // see NODE down|up X...: NODE's failure detection, one event and round each
		for _, x := range f[3:] {
			c.see(f[1], x, f[2] == "down")
		}
	case "detect": // every node not frozen sees every node it cannot reach down, one at a time
		c.detect()
	case "on-ping": // on-ping NODE CMD [; CMD]...: run the commands when NODE next pings
		c.onPing[f[1]] = f[2:]
	case "check": // check NODE: NODE's rejoin check, or as a coordinator its check of the members back
		c.check(f[1], false)
	case "refused": // refused NODE: a coordinator's decision was refused for its term: it checks its successors
		c.check(f[1], true)
	case "close": // close NODE: the client closes the shuffle at NODE
		c.close(f[1])
	case "restart": // restart NODE: it comes back without the shuffle
		c.nodes[f[1]].held, c.nodes[f[1]].coordinating = false, false
		c.nodes[f[1]].down = map[string]bool{}
	case "put": // put NODE: a client's put reaches NODE
		c.put(f[1])
	case "state":
		c.state()
	default:
		c.t.Fatalf("unknown command %q", f[0])
	}
}

// create sets up the shuffle on every member; creator coordinates.
func (c *cluster) create(id, creator string, members []string) {
	c.members = members
	c.cands = Candidates(id, creator, members)
	for _, m := range members {
		c.nodes[m] = &simNode{name: m, held: true, coordinating: m == creator, down: map[string]bool{}}
	}
	c.logf("candidates %s", strings.Join(c.cands, " "))
}

// split puts the nodes before "|" on side 1, after it on side 2, and so on.
func (c *cluster) split(f []string) {
	c.side = map[string]int{}
	s := 1
	for _, x := range f {
		if x == "|" {
			s++
			continue
		}
		c.side[x] = s
	}
}

// reach reports whether a can reach b now.
func (c *cluster) reach(a, b string) bool {
	return c.side[a] == c.side[b] && !c.frozen[a] && !c.frozen[b]
}

// epochOf is the epoch where lost are gone.
func (c *cluster) epochOf(lost []string) Epoch {
	co, term, _ := FirstLive(c.cands, lost)
	live := slices.DeleteFunc(slices.Clone(c.members), func(m string) bool { return slices.Contains(lost, m) })
	return Epoch{Number: uint64(len(lost)), Term: term, Coordinator: co, Live: live, Lost: slices.Clone(lost)}
}

// view is n's view now.
func (c *cluster) view(n *simNode) *View {
	return &View{Self: n.name, Candidates: c.cands, Members: len(c.members), Epoch: c.epochOf(n.lost), Coordinating: n.coordinating, Down: n.down}
}

// detect has every node see, one at a time, the nodes it cannot reach
// down, and the ones it can reach that it saw down up.
func (c *cluster) detect() {
	for _, a := range c.members {
		for _, b := range c.members {
			n := c.nodes[a]
			if a == b || c.frozen[a] || n.down[b] == !c.reach(a, b) {
				continue
			}
			c.see(a, b, !c.reach(a, b))
		}
	}
}

// see gives node a the event that x is down (or up) and runs a round.
func (c *cluster) see(a, x string, down bool) {
	n := c.nodes[a]
	n.down[x] = down
	word := "up"
	if down {
		word = "down"
	}
	c.logf("%s sees %s %s", a, x, word)
	if n.held {
		c.round(n)
	}
}

// round runs one failover round on n, performing its decisions.
func (c *cluster) round(n *simNode) {
	f := NewFailover()
	for d := f.Step(c.view(n)); d.Action != Done; d = f.Step(c.view(n)) {
		switch d.Action {
		case Ping:
			c.logf("%s pings %v", n.name, d.Nodes)
			if cmd := c.onPing[n.name]; cmd != nil {
				delete(c.onPing, n.name)
				c.logf("(while %s pings) %s", n.name, strings.Join(cmd, " "))
				for part := range strings.SplitSeq(strings.Join(cmd, " "), ";") {
					c.run(strings.Fields(part))
				}
			}
			for _, m := range d.Nodes {
				if f.Answered(m, c.reach(n.name, m)) {
					break
				}
			}
		case Verdict:
			q := d.Quorum
			c.logf("%s: %s %v (up %d, live %d, members %d)", n.name, q.Rule, q.Met, q.Count.Up, q.Count.Live, q.Count.Members)
		case TakeOver:
			c.logf("%s takes over in term %d, epoch %d, lost %v", n.name, d.Term, d.Epoch, d.Lost)
			n.lost, n.coordinating = slices.Clone(d.Lost), true
			c.broadcast(n)
			c.loseUnheld(n)
		case Later:
			c.logf("%s: the epoch moved while it pinged: decides again later", n.name)
		case Lose:
			for _, x := range d.Nodes {
				n.lost = append(n.lost, x)
				c.logf("%s declares %s lost: epoch %d", n.name, x, len(n.lost))
				c.broadcast(n)
			}
		}
	}
}

// loseUnheld is the end of n's takeover: the members of its epoch that
// answered it holding no state of the shuffle are declared lost.
func (c *cluster) loseUnheld(n *simNode) {
	e := c.epochOf(n.lost)
	answers := map[string]TakeoverAnswer{}
	for _, m := range e.Live {
		o := c.nodes[m]
		switch {
		case m == n.name || !c.reach(n.name, m):
		case !o.held:
			answers[m] = TakeoverUnheld
		case Joinable(c.epochOf(o.lost), e.Term, e.Lost):
			answers[m] = TakeoverFacts
		default: // it refused the takeover: another line
			answers[m] = TakeoverSilent
		}
	}
	for _, x := range LoseAfterTakeover(answers) {
		n.lost = append(n.lost, x)
		c.logf("%s: %s holds no state of the shuffle: declares it lost: epoch %d", n.name, x, len(n.lost))
		c.broadcast(n)
	}
}

// broadcast sends n's epoch to every member it can reach.
func (c *cluster) broadcast(n *simNode) {
	e := c.epochOf(n.lost)
	for _, m := range c.members {
		if m != n.name && c.reach(n.name, m) && c.nodes[m].held {
			c.apply(c.nodes[m], n.name, e)
		}
	}
}

// apply is member m's handling of an epoch move from `from`: refused if of
// an older term; declared lost, m drops the shuffle; else m adopts it.
func (c *cluster) apply(m *simNode, from string, e Epoch) {
	mine := c.epochOf(m.lost)
	switch {
	case e.Term < mine.Term:
		c.logf("%s refuses epoch %d of term %d from %s: it follows term %d", m.name, e.Number, e.Term, from, mine.Term)
	case !slices.Contains(e.Lost, m.name) && !Joinable(mine, e.Term, e.Lost):
		c.logf("%s refuses epoch %d of term %d from %s: another line of epochs than its epoch %d of term %d", m.name, e.Number, e.Term, from, mine.Number, mine.Term)
	case slices.Contains(e.Lost, m.name):
		m.held, m.coordinating = false, false
		c.logf("%s was declared lost in epoch %d by %s: steps down, drops the shuffle", m.name, e.Number, from)
	case e.Number > mine.Number:
		m.lost, m.coordinating = slices.Clone(e.Lost), false
	}
}

// check runs n's periodic check: rejoin rules when it does not coordinate,
// fencing when it does (of the members back, or of its successors when its
// own decisions were refused).
func (c *cluster) check(name string, refused bool) {
	n := c.nodes[name]
	if !n.held {
		c.logf("%s holds nothing", name)
		return
	}
	v := c.view(n)
	if !v.Coordinating {
		c.rejoin(n, v)
		return
	}
	ask := Back(v)
	if refused {
		ask = Successors(v)
	}
	for _, m := range ask {
		a := c.ask(n, m)
		act := Fence(v.Epoch, a)
		c.logf("%s asks %s: %s (epoch %d, term %d): %s", name, m, a.Status, a.Epoch, a.Term, act)
		switch act {
		case Tell:
			c.apply(c.nodes[m], name, v.Epoch)
		case StepDown:
			n.held, n.coordinating = false, false
			c.logf("%s steps down", name)
			return
		}
	}
}

// rejoin runs the rejoin rules on n.
func (c *cluster) rejoin(n *simNode, v *View) {
	first := v.Epoch.Coordinator
	a := c.ask(n, first)
	r, ok := First(first, a)
	if !ok {
		answers := map[string]Answer{first: a}
		for _, m := range Others(CheckTargets(v), first) {
			answers[m] = c.ask(n, m)
		}
		r = Decide(v, answers)
	}
	c.logf("%s checks: drop %v (%s)", n.name, r.Drop, r.Why)
	for _, t := range r.Tell {
		c.logf("%s asks %s to declare it lost", n.name, t)
		if co := c.nodes[t]; c.reach(n.name, t) && co.held && co.coordinating && slices.Contains(c.epochOf(co.lost).Live, n.name) {
			co.lost = append(co.lost, n.name)
			c.logf("%s declares %s lost: epoch %d", t, n.name, len(co.lost))
			c.broadcast(co)
		}
	}
	if r.Drop {
		n.held, n.coordinating = false, false
	}
}

// ask is m's answer to a check from n.
func (c *cluster) ask(n *simNode, m string) Answer {
	if !c.reach(n.name, m) {
		return Answer{}
	}
	o := c.nodes[m]
	return AnswerCheck(&CheckQuery{Asker: n.name, Held: o.held, ClosedHere: o.closed, View: *c.view(o)})
}

// close has the client close the shuffle at node a: every node a reaches
// frees it.
func (c *cluster) close(a string) {
	for _, m := range c.members {
		if c.reach(a, m) && c.nodes[m].held {
			c.nodes[m].held, c.nodes[m].closed, c.nodes[m].coordinating = false, true, false
			c.logf("%s frees the shuffle", m)
		}
	}
}

// state prints every member's state.
func (c *cluster) state() {
	for _, m := range c.members {
		n := c.nodes[m]
		if !n.held {
			c.logf("%s: -", m)
			continue
		}
		e := c.epochOf(n.lost)
		role := "member"
		if n.coordinating {
			role = "coordinator"
		}
		c.logf("%s: %s, epoch %d, term %d, follows %s, live %v", m, role, e.Number, e.Term, e.Coordinator, e.Live)
	}
}

// put is n's answer to a client's put: it takes it if it holds the
// shuffle; else it answers "ask another node" with the reason the record
// of the highest term gives, and a restarted member tells the coordinator,
// which declares it lost.
func (c *cluster) put(name string) {
	if n := c.nodes[name]; n.held {
		c.logf("%s takes the put", name)
		return
	}
	var best *Epoch
	for _, m := range c.members {
		if o := c.nodes[m]; o.held && o.coordinating {
			if e := c.epochOf(o.lost); best == nil || e.Term > best.Term {
				best = &e
			}
		}
	}
	if best == nil {
		c.logf("%s: unknown shuffle (no record)", name)
		return
	}
	why, tell := Unheld(name, &Record{Members: c.members, Lost: best.Lost, Coordinator: best.Coordinator, Term: best.Term})
	c.logf("%s: ask another node: %s", name, why)
	co := c.nodes[best.Coordinator]
	if tell && c.reach(name, co.name) && slices.Contains(best.Live, name) {
		co.lost = append(co.lost, name)
		c.logf("%s declares %s lost: epoch %d", co.name, name, len(co.lost))
		c.broadcast(co)
	}
}
