package service

// ForgetShuffle drops shuffle id on this node as if it had never had it
// (no tombstone): a node that missed the create.
func (s *Service) ForgetShuffle(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.shuffles, id)
}
