package admin

import (
	"encoding/json"
	"net/http"
)

// DrainReply is the answer to POST /drain.
type DrainReply struct {
	Node     string `json:"node"`
	Draining bool   `json:"draining"`
}

// drain asks the node to drain and stop, as SIGTERM does: it refuses new
// puts from now on, lets the running ones finish and leaves the cluster
// (serve's --drain-timeout bounds the wait). It answers 202 at once; GET
// /status stops answering once the node has left.
func (s *Server) drain(w http.ResponseWriter, r *http.Request) {
	svc := s.src.Service
	svc.RequestDrain()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	_ = json.NewEncoder(w).Encode(DrainReply{Node: svc.Name(), Draining: true})
}
