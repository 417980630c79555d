package service

import (
	"context"
	"errors"

	"github.com/shufflenode/shufflenode/guests"
)

// A node that joined the cluster after a shuffle was created runs its
// input tasks as a guest, a sender only (package guests).

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
	if rerr != nil || !guests.MayJoin(s.Name(), r) {
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
	sh, ok, _ := s.shuffles.Find(id, s.guest)
	return sh, ok
}

// isGone reports whether this node dropped shuffle id (a tombstone).
func (s *Service) isGone(id string) bool {
	return s.shuffles.Gone(id)
}

// guest reports whether sh is held here as a guest (this node is not one
// of its members).
func (s *Service) guest(sh *entry) bool { return guests.Is(s.Name(), sh.Members) }
