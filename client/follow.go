package client

import (
	"context"
	"hash/fnv"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// A Result asks one node about its shuffle (create, barrier, locations,
// layout, close): its home, chosen from the shuffle ID so that the
// shuffles of one client are coordinated by different nodes (the node that
// takes the create coordinates the shuffle until it is lost). Any member
// answers the barrier and the locations (it asks the coordinator, and waits
// out a coordinator's replacement), so when the home node cannot be
// reached, the Result moves on to the next node of Job.Nodes.

// homeOf is the index of the node that takes the create of shuffle id
// among n nodes.
func homeOf(id string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(id))
	return int(h.Sum32() % uint32(n))
}

// ask runs call against the home node, and while it fails because that node
// cannot be reached, against the next ones, each node once. It returns the
// last call's error.
func (r *Result) ask(ctx context.Context, call func(*Client) error) error {
	var err error
	for range r.clients {
		i := int(r.home.Load())
		if err = call(r.clients[i]); status.Code(err) != codes.Unavailable || ctx.Err() != nil {
			return err
		}
		r.home.CompareAndSwap(int32(i), int32((i+1)%len(r.clients)))
	}
	return err
}

// homeAddr is the address of the node the Result asks now.
func (r *Result) homeAddr() string { return r.clients[r.home.Load()].Addr() }
