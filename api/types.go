package api

// Flight action types.
const (
	ActionCreate  = "create"
	ActionBarrier = "barrier"
	ActionStatus  = "status"
	ActionClose   = "close"
	// ActionMembers lists the cluster's members as the node sees them
	// (no body; reply: []Member as JSON).
	ActionMembers = "members"
)

// Member is one cluster member in the members action's reply.
type Member struct {
	Name    string   `json:"name"`
	PeerID  string   `json:"peer_id"`
	Addrs   []string `json:"addrs"`
	APIAddr string   `json:"api_addr"`
	Gossip  string   `json:"gossip_addr"`
}

// ShuffleRef names a shuffle in an action body or a descriptor.
type ShuffleRef struct {
	Shuffle string `json:"shuffle"`
}

// BarrierReply is the reply of the barrier action: either Sealed, or the
// tasks that have no done attempt (a node was lost, or their puts failed),
// which the client runs again with new attempt numbers before asking again.
type BarrierReply struct {
	Sealed bool     `json:"sealed"`
	Replay []uint64 `json:"replay,omitempty"`
	Epoch  uint64   `json:"epoch"`
	// ReplaySet is how many finished tasks lost nodes took with them.
	ReplaySet int `json:"replay_set,omitempty"`
}

// PutCmd tags a DoPut stream with the input task attempt it carries.
type PutCmd struct {
	Shuffle string `json:"shuffle"`
	Task    uint64 `json:"task"`
	Attempt uint32 `json:"attempt"`
}

// PutReply is the app metadata of the PutResult that ends a DoPut.
type PutReply struct {
	Rows    uint64 `json:"rows"`
	Bytes   uint64 `json:"bytes"`
	Skipped bool   `json:"skipped,omitempty"`
}

// Ticket names one output partition.
type Ticket struct {
	Shuffle   string `json:"shuffle"`
	Partition int    `json:"partition"`
}

// Status is the reply of the status action.
type Status struct {
	Shuffle     string `json:"shuffle"`
	Node        string `json:"node"`
	Phase       string `json:"phase"`
	Coordinator string `json:"coordinator"`
	Tasks       int    `json:"tasks"`
	TasksDone   int    `json:"tasks_done,omitempty"`
	Partitions  int    `json:"partitions"`
	Error       string `json:"error,omitempty"`
}

// MaxMessageBytes is the gRPC message limit on both sides (the default 4 MiB
// breaks larger batches).
const MaxMessageBytes = 256 << 20
