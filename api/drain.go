package api

import "github.com/shufflenode/shufflenode/flightproto"

// drain asks the node to drain and stop (service.Service.RequestDrain):
// the process that runs it refuses new puts, lets the running ones finish
// and leaves. It answers at once.
func (s *Server) drain() flightproto.DrainReply {
	s.svc.RequestDrain()
	return flightproto.DrainReply{Node: s.svc.Name(), Draining: true}
}
