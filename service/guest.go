package service

import (
	"context"
	"errors"
	"slices"

	"github.com/shufflenode/shufflenode/record"
)

// A node that joined the cluster after a shuffle was created is not one of
// its pinned members: it owns none of its output partitions (ownership
// stays as created). It can still run the shuffle's input tasks: asked to
// put a task of a shuffle it does not hold, it installs the shuffle from
// the cluster's record as a guest, a sender only, and runs the put as any
// member would. Its begin and done reports go to the coordinator, which
// counts its tasks in the barrier like a member's (the barrier knows
// senders by name, not by membership); its shards go to the owners of the
// record's epoch.
//
// A guest hears none of the coordinator's decisions (they go to members):
// when the epoch moves, its next begin or done report is refused as stale
// (or, when the coordinator was lost, finds it gone), the put fails with
// ErrStaleEpoch or ErrUnavailable (the client runs the task again), and
// the guest reads the record again for the new epoch and coordinator. A
// successor that takes over learns the guest's finished tasks from what
// the receivers committed (coordinator.Shuffle's inferDone), as it does
// for a lost sender's. After the seal every
// task is done, and a guest's put of one is skipped. Every other call about
// the shuffle (barrier, locations, status, reads) is answered as by any
// node that does not hold it: "ask another node" (its view of the epoch
// may be old). The failover driver leaves guests out (a guest takes part
// in no takeover or rejoin check); a guest's entry is dropped when it has
// been idle for the idle expiry.

// senderLookup is clientLookup for a put: a shuffle this node does not
// hold, and was not a member of at its create (the record names neither
// among its members nor among its lost), is installed as a guest.
func (s *Service) senderLookup(ctx context.Context, id string) (*entry, error) {
	if sh, ok := s.guestEntry(id); ok {
		return sh, nil
	}
	sh, err := s.lookup(id)
	if err == nil {
		return sh, nil
	}
	if !errors.Is(err, ErrUnknownShuffle) || s.isGone(id) {
		return s.clientLookup(ctx, id)
	}
	r, rerr := s.FetchRecord(ctx, id)
	if rerr != nil || !s.mayJoin(r) {
		return s.clientLookup(ctx, id)
	}
	if sh, err = s.installRecord(r); err != nil {
		return nil, err
	}
	s.log.Info("took a shuffle as a sender: this node joined after its create", "shuffle", id, "epoch", r.Epoch)
	return sh, nil
}

// guestEntry returns shuffle id if this node holds it as a guest.
func (s *Service) guestEntry(id string) (*entry, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	sh, ok := s.shuffles[id]
	if !ok || s.closed || !s.guest(sh) {
		return nil, false
	}
	return sh, true
}

// isGone reports whether this node dropped shuffle id (a tombstone).
func (s *Service) isGone(id string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, gone := s.gone.why(id)
	return gone
}

// mayJoin reports whether this node may run r's tasks as a guest: it was
// not a member at the create.
func (s *Service) mayJoin(r *record.Record) bool {
	return !slices.Contains(r.Members, s.Name()) && !slices.Contains(r.Lost, s.Name())
}

// guest reports whether sh is held here as a guest (this node is not one
// of its members).
func (s *Service) guest(sh *entry) bool { return !slices.Contains(sh.Members, s.Name()) }

// refreshGuest moves guest sh to the epoch of its record, if that is newer,
// after a put failed as stale or unavailable: the epoch moved, or a
// successor took over from a lost coordinator (the epoch's lost list names
// the coordinator), without this node hearing of it. Errors are logged:
// the next failed put tries again.
func (s *Service) refreshGuest(ctx context.Context, sh *entry, putErr error) {
	if !errors.Is(putErr, ErrStaleEpoch) && !errors.Is(putErr, ErrUnavailable) || !s.guest(sh) {
		return
	}
	r, err := s.FetchRecord(ctx, sh.ID())
	if err != nil {
		s.log.Warn("a guest reading the shuffle's record", "shuffle", sh.ID(), "err", err)
		return
	}
	sh.Lock()
	moved := r.Epoch > sh.RouteLocked().Epoch
	if moved {
		err = sh.MoveLocked(r.Lost)
	}
	sh.Unlock()
	switch {
	case err != nil:
		s.log.Warn("a guest moving to the record's epoch", "shuffle", sh.ID(), "epoch", r.Epoch, "err", err)
	case moved:
		s.split.ForgetBefore(sh.ID(), r.Epoch)
		s.log.Info("a guest moved to the record's epoch", "shuffle", sh.ID(), "epoch", r.Epoch)
	}
}
