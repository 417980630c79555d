package coordinator

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/shufflenode/shufflenode/barrier"
	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/recovery"
	"github.com/shufflenode/shufflenode/shuffle"
)

// Rebuild builds the coordinator part of st on the node that takes over
// from a lost coordinator. st's route must already be the takeover's epoch
// (its lost list ends with the lost coordinator and the members seen down
// with it), and facts are the members' replies to control.OpTakeover by
// node (a member missing from facts reported nothing).
//
// The tracker is rebuilt epoch by epoch from the start: the attempts
// finished in the epoch become done (the lowest attempt of a task first),
// the commits of the epoch are counted, a task whose sender was lost is
// done if every live receiver of the epoch committed one attempt of it (see
// inferDone), a done task that misses the commit
// of a receiver still live is dropped (that commit will never come: it
// replays in full), then the epoch's loss is applied as the lost
// coordinator applied it (Lose, or Excuse for the first loss of a
// replicated shuffle). Act on the returned decision with Resume.
func Rebuild(st *shuffle.State, facts map[string]*control.Facts) (*Shuffle, barrier.Decision, error) {
	rt := st.Route()
	start := st.StartEpoch()
	sh, err := startOver(st, rt.Lost[:start])
	if err != nil {
		return nil, barrier.Decision{}, err
	}
	sent, held := byEpoch(facts)
	live := func(n string) bool { return slices.Contains(rt.Live, n) }
	for e := start; ; e++ {
		sh.feed(sent[e], held[e])
		if err := sh.inferDone(e, held[e], live); err != nil {
			return nil, barrier.Decision{}, err
		}
		sh.dropIncomplete(int(e), live)
		if e == rt.Epoch || sh.tracker.Phase() == barrier.Failed {
			break
		}
		if err := sh.replayLoss(rt.Lost[:e+1]); err != nil {
			return nil, barrier.Decision{}, err
		}
	}
	return sh, sh.outcome(), nil
}

// startOver is a coordinator part of st with an empty tracker in the epoch
// where lost are gone.
func startOver(st *shuffle.State, lost []string) (*Shuffle, error) {
	r0, err := st.RouteFor(lost)
	if err != nil {
		return nil, err
	}
	tr, err := barrier.New(barrier.Config{Shuffle: st.ID(), Tasks: st.Spec.Tasks, Receivers: r0.Live})
	if err == nil && r0.Epoch != 0 {
		err = tr.SetReceivers(int(r0.Epoch), r0.Live)
	}
	if err != nil {
		return nil, err
	}
	return &Shuffle{State: st, recovering: newGate(), tracker: tr, begun: map[shuffle.AttemptKey]string{}, final: make(chan struct{})}, nil
}

// reported is one member's fact, with the member that reported it.
type reported[T any] struct {
	node string
	fact T
}

// byEpoch groups the members' facts by epoch, each group in a fixed order
// (task, attempt, node), so that every rebuild of the same facts agrees.
func byEpoch(facts map[string]*control.Facts) (map[uint64][]reported[control.Finished], map[uint64][]reported[control.Committed]) {
	sent := map[uint64][]reported[control.Finished]{}
	held := map[uint64][]reported[control.Committed]{}
	for _, node := range slices.Sorted(maps.Keys(facts)) {
		for _, f := range facts[node].Sent {
			sent[f.Epoch] = append(sent[f.Epoch], reported[control.Finished]{node, f})
		}
		for _, c := range facts[node].Held {
			held[c.Epoch] = append(held[c.Epoch], reported[control.Committed]{node, c})
		}
	}
	for _, g := range sent {
		slices.SortStableFunc(g, func(a, b reported[control.Finished]) int {
			return cmp.Or(cmp.Compare(a.fact.Task, b.fact.Task), cmp.Compare(a.fact.Attempt, b.fact.Attempt))
		})
	}
	return sent, held
}

// feed gives the tracker one epoch's facts. A fact the tracker rejects (a
// late duplicate, a report of a sealed or failed shuffle) changes nothing;
// a mismatch fails the shuffle, as it would have live.
func (sh *Shuffle) feed(sent []reported[control.Finished], held []reported[control.Committed]) {
	for _, f := range sent {
		_, _ = sh.tracker.TaskDone(f.fact.Task, f.fact.Attempt, f.node, f.fact.Sent)
	}
	for _, c := range held {
		_, _ = sh.tracker.Committed(c.node, c.fact.Task, c.fact.Attempt, c.fact.Held)
	}
}

// inferDone makes done, for each task without a done attempt whose sender
// did not report (it was lost), the lowest attempt of epoch that every
// receiver of the epoch still live committed: a receiver commits only with
// the attempt's end marker and every piece it announces, so what it holds
// is what the sender sent it. What the attempt sent to a receiver lost
// since is unknown: if it held partitions then, it counts as data (one
// piece), so that losing it replays the task, unless a replica absorbs the
// loss.
func (sh *Shuffle) inferDone(epoch uint64, held []reported[control.Committed], live func(string) bool) error {
	rt, err := sh.RouteFor(sh.Route().Lost[:epoch])
	if err != nil {
		return err
	}
	byAttempt := map[shuffle.AttemptKey]map[string]barrier.Totals{}
	for _, c := range held {
		k := shuffle.AttemptKey{Task: c.fact.Task, Attempt: c.fact.Attempt}
		if byAttempt[k] == nil {
			byAttempt[k] = map[string]barrier.Totals{}
		}
		byAttempt[k][c.node] = c.fact.Held
	}
	keys := slices.SortedFunc(maps.Keys(byAttempt), func(a, b shuffle.AttemptKey) int {
		return cmp.Or(cmp.Compare(a.Task, b.Task), cmp.Compare(a.Attempt, b.Attempt))
	})
	for _, k := range keys {
		if sent, ok := inferred(rt, sh.Members, byAttempt[k], live); ok {
			if _, _, done := sh.tracker.DoneAttempt(k.Task); !done {
				_, _ = sh.tracker.TaskDone(k.Task, k.Attempt, "", sent)
			}
		}
	}
	return nil
}

// inferred is what an attempt of rt's epoch sent to each receiver,
// inferred from what the live ones hold (recovery.InferSent); ok is false
// if a live receiver did not commit it (recovery.Committed).
func inferred(rt *shuffle.Route, members []string, held map[string]barrier.Totals, live func(string) bool) (map[string]barrier.Totals, bool) {
	witness := func(p int) recovery.Witness {
		r := rt.Live[p]
		_, ok := held[r]
		return recovery.Witness{Live: live(r), Committed: ok, Owned: rt.HoldsAny(slices.Index(members, r))}
	}
	if !recovery.Committed(len(rt.Live), witness) {
		return nil, false
	}
	sent := make(map[string]barrier.Totals, len(rt.Live))
	for p, r := range rt.Live {
		sent[r] = held[r]
		if recovery.InferSent(witness(p)) == recovery.Data {
			sent[r] = barrier.Totals{Pieces: 1}
		}
	}
	return sent, true
}

// dropIncomplete drops the tasks done in epoch that a live receiver did
// not report committing.
func (sh *Shuffle) dropIncomplete(epoch int, live func(string) bool) {
	if sh.tracker.Phase() != barrier.Running {
		return
	}
	for _, task := range sh.tracker.Incomplete(epoch, live) {
		_ = sh.tracker.Drop(task)
	}
}

// replayLoss moves the tracker to the epoch where lost are gone, the last
// of them being the one lost then.
func (sh *Shuffle) replayLoss(lost []string) error {
	rt, err := sh.RouteFor(lost)
	if err != nil {
		return err
	}
	node := lost[len(lost)-1]
	replay, _, err := sh.lose(rt, node, recovery.Absorbed(sh.Spec.Replicated(), len(lost)))
	if err != nil {
		return fmt.Errorf("coordinator: shuffle %s: rebuilding the loss of %s in epoch %d: %w", sh.ID(), node, rt.Epoch, err)
	}
	sh.replayed += len(replay)
	return nil
}

// outcome is the decision the rebuilt tracker stands at.
func (sh *Shuffle) outcome() barrier.Decision {
	switch sh.tracker.Phase() {
	case barrier.Sealed:
		return barrier.Decision{Seal: true}
	case barrier.Failed:
		return barrier.Decision{Fail: sh.tracker.Err()}
	}
	return barrier.Decision{}
}

// Resume acts on the decision Rebuild returned: a rebuilt tracker that
// stands sealed is announced again in the new term (members that reopened
// for the takeover seal again), a failed one fails everywhere.
func (cd *Coordinator) Resume(sh *Shuffle, d barrier.Decision) {
	sh.Lock()
	rt, p := sh.RouteLocked(), sh.tracker.Progress()
	sh.Unlock()
	cd.cfg.Log.Warn("took over as coordinator", "shuffle", sh.ID(), "term", rt.Term, "epoch", rt.Epoch,
		"tasks_done", p.TasksDone, "tasks", p.Tasks, "phase", p.Phase)
	cd.decide(sh, d)
}
