package shuffle

import (
	"fmt"
	"slices"
	"time"

	"github.com/shufflenode/shufflenode/recovery"
	"github.com/shufflenode/shufflenode/wire"
)

// Who coordinates a shuffle is a function of its lost list (see package
// recovery, which orders the candidates and picks the coordinator of an
// epoch): every member agrees without talking.

// coordinatorFor returns the coordinator and term of the epoch in which
// lost are gone: the first candidate not lost and its index. ok is false
// when every candidate is lost.
func (st *State) coordinatorFor(lost []string) (node string, term uint64, ok bool) {
	return recovery.FirstLive(st.candidates, lost)
}

// CoordinatorOf is who coordinates shuffle id, created by creator over
// members, in the epoch where lost are gone, and in which term, as every
// member computes it; ok is false when every member is lost.
func CoordinatorOf(id, creator string, members, lost []string) (node string, term uint64, ok bool) {
	return recovery.FirstLive(recovery.Candidates(id, creator, members), lost)
}

// Candidates returns the coordinator candidates in order (do not modify).
func (st *State) Candidates() []string { return st.candidates }

// Successor returns who coordinates once down (members seen failed or gone,
// in any order) join the current lost list: the first candidate in neither,
// and the lost list of that epoch (the current one, then the live members
// of down in candidate order). ok is false when every candidate is down.
func (st *State) Successor(down func(string) bool) (node string, lost []string, ok bool) {
	rt := st.Route()
	return recovery.Successor(st.candidates, rt.Live, rt.Lost, down)
}

// Coordinator returns the coordinator of the current epoch.
func (st *State) Coordinator() string { return st.Route().Coordinator }

// Term returns the coordinator's term in the current epoch.
func (st *State) Term() uint64 { return st.Route().Term }

// StartEpoch is the epoch the shuffle started in on this node (the lost
// list it was created with: a co-partitioned shuffle starts where the other
// one is).
func (st *State) StartEpoch() uint64 { return st.start }

// CheckDecision checks a seal or fail of the coordinator from, in term,
// against this node's term: one of an older term is refused (ErrStaleTerm:
// from was replaced); one of a newer term asks the sender to retry (this
// node has not taken the takeover yet).
func (st *State) CheckDecision(op, from string, term uint64) error {
	rt := st.Route()
	switch {
	case term < rt.Term:
		return Refuse(wire.RefuseStaleEpoch, fmt.Errorf("%w: shuffle %s: %s of term %d from node %s refused: node %s follows coordinator %s of term %d",
			ErrStaleTerm, st.ID(), op, term, from, st.Self, rt.Coordinator, rt.Term))
	case term > rt.Term:
		return &Busy{After: 20 * time.Millisecond, Err: fmt.Errorf("shuffle %s: %s of term %d from node %s: node %s is still at term %d",
			st.ID(), op, term, from, st.Self, rt.Term)}
	}
	return nil
}

// CheckSeal checks a seal of the coordinator from, in term, decided in
// epoch: CheckDecision, then the epoch. A seal of an older epoch is refused
// (ErrStaleEpoch): it was sent before a loss moved the shuffle on, and
// taking it would let reads start before the tasks the loss took back ran
// again. A seal of a newer epoch asks the sender to retry (this node has not
// taken the move yet).
func (st *State) CheckSeal(from string, term, epoch uint64) error {
	if err := st.CheckDecision("seal", from, term); err != nil {
		return err
	}
	rt := st.Route()
	switch {
	case epoch < rt.Epoch:
		return Refuse(wire.RefuseStaleEpoch, fmt.Errorf("%w: shuffle %s: seal of epoch %d from node %s refused: node %s is at epoch %d",
			ErrStaleEpoch, st.ID(), epoch, from, st.Self, rt.Epoch))
	case epoch > rt.Epoch:
		return &Busy{After: 20 * time.Millisecond, Err: fmt.Errorf("shuffle %s: seal of epoch %d from node %s: node %s is still at epoch %d",
			st.ID(), epoch, from, st.Self, rt.Epoch)}
	}
	return nil
}

// CheckMove checks an epoch move (control.OpEpoch or OpTakeover) from node
// from, in term, to the epoch where lost are gone: well-formed, not of an
// older term than this node's, of its line of epochs when of a newer term
// (recovery.Joinable), and sent by that epoch's coordinator. A move that
// declares this node lost fails the shuffle here.
func (st *State) CheckMove(op, from string, term uint64, lost []string, epoch uint64) error {
	if uint64(len(lost)) != epoch {
		return fmt.Errorf("%w: shuffle %s: %s: epoch %d with %d lost nodes", ErrBadInput, st.ID(), op, epoch, len(lost))
	}
	if err := st.CheckDecision(op, from, min(term, st.Term())); err != nil {
		return err
	}
	if slices.Contains(lost, st.Self) {
		err := fmt.Errorf("%w: shuffle %s: node %s was declared lost in epoch %d by %s of term %d", ErrDeclaredLost, st.ID(), st.Self, epoch, from, term)
		st.Finish(Failed, err)
		return err
	}
	if rt := st.Route(); !recovery.Joinable(recovery.Epoch{Number: rt.Epoch, Term: rt.Term, Lost: rt.Lost}, term, lost) {
		return Refuse(wire.RefuseStaleEpoch, fmt.Errorf("%w: shuffle %s: %s of epoch %d from %s in term %d (lost %v) refused: node %s is at epoch %d of term %d (lost %v), which it does not extend",
			ErrOtherLine, st.ID(), op, epoch, from, term, lost, st.Self, rt.Epoch, rt.Term, rt.Lost))
	}
	node, want, ok := st.coordinatorFor(lost)
	if !ok || want != term || (from != "" && from != node) {
		return fmt.Errorf("%w: shuffle %s: %s of epoch %d from %s in term %d: that epoch's coordinator is %s of term %d",
			ErrBadInput, st.ID(), op, epoch, from, term, node, want)
	}
	return nil
}
