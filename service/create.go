package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/shufflenode/shufflenode/barrier"
	"github.com/shufflenode/shufflenode/spec"
)

// Create validates sp and creates the shuffle on every live member, with this
// node as its coordinator. It returns once every member has it.
func (s *Service) Create(ctx context.Context, sp *spec.Spec) error {
	if _, err := sp.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	if _, err := s.lookup(sp.ID); err == nil {
		return fmt.Errorf("%w: %s", ErrExists, sp.ID)
	}
	var members []string
	for _, m := range s.net.Members() {
		members = append(members, m.Name)
	}
	c := control{Op: opCreate, Shuffle: sp.ID, Spec: sp, Coordinator: s.Name(), Members: members}
	if err := s.broadcast(ctx, members, c); err != nil {
		_ = s.broadcast(context.WithoutCancel(ctx), members, control{Op: opClose, Shuffle: sp.ID})
		return fmt.Errorf("service: create shuffle %s: %w", sp.ID, err)
	}
	s.log.Info("shuffle created", "shuffle", sp.ID, "tasks", sp.Tasks, "partitions", sp.Partitions, "members", len(members))
	return nil
}

// install handles opCreate: build the shuffle's state on this node.
func (s *Service) install(c *control) error {
	if c.Spec == nil || c.Spec.ID != c.Shuffle {
		return fmt.Errorf("%w: create %s without a matching spec", ErrBadInput, c.Shuffle)
	}
	sh, err := newShuffle(c.Spec, c.Coordinator, c.Members, s.Name())
	if err != nil {
		return err
	}
	if c.Coordinator == s.Name() {
		tr, err := barrier.New(barrier.Config{Shuffle: c.Shuffle, Tasks: c.Spec.Tasks, Receivers: sh.members})
		if err != nil {
			return err
		}
		sh.coord = &coordState{tracker: tr, begun: map[attemptKey]string{}, final: make(chan struct{})}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.shuffles[c.Shuffle]; ok {
		return fmt.Errorf("%w: %s on node %s", ErrExists, c.Shuffle, s.Name())
	}
	s.shuffles[c.Shuffle] = sh
	return nil
}

// CloseShuffle frees the shuffle on every member. Closing an unknown shuffle
// on some member is not an error: close is idempotent.
func (s *Service) CloseShuffle(ctx context.Context, id string) error {
	var members []string
	for _, m := range s.net.Members() {
		members = append(members, m.Name)
	}
	return s.broadcast(ctx, members, control{Op: opClose, Shuffle: id})
}

// drop frees a shuffle on this node.
func (s *Service) drop(id string) error {
	s.mu.Lock()
	sh, ok := s.shuffles[id]
	delete(s.shuffles, id)
	s.mu.Unlock()
	if !ok {
		return nil
	}
	sh.finish(Failed, errors.New("closed"))
	s.split.Forget(id)
	return s.store.DropShuffle(id)
}
