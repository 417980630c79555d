package service

// ForgetShuffle drops shuffle id on this node as if it had never had it
// (no tombstone): a node that missed the create.
func (s *Service) ForgetShuffle(id string) {
	s.shuffles.Forget(id)
}

// RouteOf returns the epoch and the live members of shuffle id as this
// node knows them.
func (s *Service) RouteOf(id string) (uint64, []string) {
	sh, err := s.lookup(id)
	if err != nil {
		return 0, nil
	}
	rt := sh.Route()
	return rt.Epoch, rt.Live
}

// SetAfterTakeoverPings has f called with the node and the shuffle each
// time this node's pings, as a successor, found a majority up, before it
// checks its route and takes over; the returned func removes it.
func (s *Service) SetAfterTakeoverPings(f func(node, id string)) (restore func()) {
	s.fo.SetAfterPings(f)
	return func() { s.fo.SetAfterPings(nil) }
}

// SetHandOverCopied has f called each time this node, draining, copied its
// share of a shuffle's partitions to one new owner.
func (s *Service) SetHandOverCopied(f func(shuffle, to string)) { s.drain.SetCopied(f) }
