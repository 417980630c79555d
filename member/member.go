package member

// Member is one node of the cluster as the others see it.
type Member struct {
	// Name is the unique member name.
	Name string
	// PeerID is the node's libp2p peer ID (base58); empty off libp2p.
	PeerID string
	// Addrs are the node's libp2p multiaddrs.
	Addrs []string
	// APIAddr is the node's client-API address (may be empty).
	APIAddr string
	// GossipAddr is the node's memberlist address (host:port).
	GossipAddr string
}

// Clone returns a copy of m that shares no slice with it.
func (m Member) Clone() Member {
	m.Addrs = append([]string(nil), m.Addrs...)
	return m
}

// EventKind says what happened to a member.
type EventKind int

// Event kinds.
const (
	// Joined: a node joined (or rejoined after a failure or restart).
	Joined EventKind = iota
	// Left: a node left gracefully.
	Left
	// Failed: a node was declared dead by the failure detector, or it
	// restarted (its memory is gone); a restart is followed by a Joined for
	// the new process.
	Failed
)

// String returns "join", "leave" or "fail".
func (k EventKind) String() string {
	switch k {
	case Joined:
		return "join"
	case Left:
		return "leave"
	case Failed:
		return "fail"
	}
	return "unknown"
}

// Event is a change of membership.
type Event struct {
	Kind   EventKind
	Member Member
}
