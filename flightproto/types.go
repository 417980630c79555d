package flightproto

// Flight action types (docs/flight-api.md has their bodies and replies).
const (
	// ActionCreate creates a shuffle (body CreateRequest; reply CreateReply).
	ActionCreate = "create"
	// ActionBarrier waits for the seal or the tasks to replay (body
	// ShuffleRef; reply BarrierReply).
	ActionBarrier = "barrier"
	// ActionStatus is a node's view of a shuffle (body ShuffleRef; reply
	// Status).
	ActionStatus = "status"
	// ActionClose frees a shuffle on every member (body ShuffleRef; no reply).
	ActionClose = "close"
	// ActionMembers lists the cluster's members as the node sees them
	// (no body; reply MembersReply as JSON).
	ActionMembers = "members"
	// ActionLayout returns an array shuffle's layout in the form of the
	// __partitioned__ protocol (body ShuffleRef; reply Layout as JSON).
	ActionLayout = "layout"
	// ActionDrain asks the node to drain and stop, as SIGTERM does (no
	// body; reply DrainReply as JSON).
	ActionDrain = "drain"
)

// DrainReply is the reply of the drain action: the node refuses new puts
// from now on and leaves the cluster once its running puts finished (or
// its drain timeout passed).
type DrainReply struct {
	Node     string `json:"node"`
	Draining bool   `json:"draining"`
}

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
	// Rows, when not 0, is how many rows the client is putting: a node
	// fails a dataframe put whose stream ends with another count, so a
	// stream cut short can never pass for the whole task.
	Rows uint64 `json:"rows,omitempty"`
	// File, when set, is the absolute path of a Parquet file that the node
	// reads as the task's input (under its input roots: api.Security);
	// the stream then carries the schema and no batches.
	File string `json:"file,omitempty"`
	// Tasks, when true, makes the stream a put of several tasks, each
	// named by the PutTag of its first batch (Task, Attempt, Rows and File
	// are then unused; see PutTag). Nodes from revision
	// MinPutTasksRevision on.
	Tasks bool `json:"tasks,omitempty"`
}

// PutReply is the app metadata of the PutResult that ends a DoPut.
type PutReply struct {
	Rows    uint64 `json:"rows"`
	Bytes   uint64 `json:"bytes"`
	Skipped bool   `json:"skipped,omitempty"`
	// InputBytes are the Arrow bytes of the input the node read (from the
	// stream or PutCmd.File); 0 when Skipped.
	InputBytes uint64 `json:"input_bytes,omitempty"`
}

// Ticket names one output partition, or with Partitions or Range several
// of one dataframe shuffle, read in one DoGet (see PartitionsTicket).
type Ticket struct {
	Shuffle   string `json:"shuffle"`
	Partition int    `json:"partition"`
	// Partitions lists the partitions of a multi-partition read, in the
	// order they are streamed.
	Partitions []int `json:"partitions,omitempty"`
	// Range [lo, hi) is a multi-partition read of partitions lo..hi-1.
	Range []int `json:"range,omitempty"`
	// Pack asks a multi-partition read to share batches among consecutive
	// small partitions, each batch saying where partitions end in it
	// (BatchEnds), instead of a batch of its own per partition and an
	// empty one per end. A node that predates it ignores it.
	Pack bool `json:"pack,omitempty"`
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

// Node-side operations: the Op of an OpTicket.
const (
	// OpJoin joins partition p of two dataframe shuffles (left, right) as
	// OpTicket.Join says; the stream's schema is the join's output schema
	// (dfops.JoinSchema of the two shuffles' schemas).
	OpJoin = "join"
	// OpSort sorts partition p of one dataframe shuffle by OpTicket.Column,
	// stably, nulls and NaN last (dfops.SortStable); the stream's schema is
	// the shuffle's.
	OpSort = "sort"
	// OpCopy writes partition p of one dataframe shuffle, as it is, to
	// OpTicket.Write's file (required: a Ticket streams a partition): for a
	// shuffle whose output is files, written by the partitions' owners.
	OpCopy = "copy"
)

// OpTicket is a DoGet ticket (as JSON) that runs an operation on the node
// that receives it instead of streaming one partition as it is: the node
// reads partition Partition of every shuffle in Shuffles (from its own store
// when it owns it, else from the owner), runs Op and streams the result. It
// is told apart from a Ticket by its "op" field. Send it to the owner of the
// partition (Ticket locations): co-partitioned shuffles (spec co_partition)
// then never cross the network before the operation.
type OpTicket struct {
	Op        string   `json:"op"`
	Shuffles  []string `json:"shuffles"`
	Partition int      `json:"partition"`
	// Join is OpJoin's join (required there, absent otherwise).
	Join *JoinSpec `json:"join,omitempty"`
	// Column is OpSort's sort column (required there, absent otherwise).
	Column string `json:"column,omitempty"`
	// Write, if set, has the node write the result to a Parquet file
	// instead of streaming it: the stream then carries one empty batch,
	// sent once the file is committed, whose stats count the rows and
	// bytes written.
	Write *WriteSpec `json:"write,omitempty"`
}

// WriteSpec is where and how a node writes an op's result: one Parquet
// file at Path, an absolute path ending in ".parquet" whose directory
// exists on the node and lies under one of the node's output roots (serve
// --output-root; a node without one refuses). The file appears whole or
// not at all (written to a hidden temporary file beside it, synced, then
// renamed; not synced under DeferSync), so a retried op simply writes it
// again. Compression is auto (default), snappy, zstd or none; NoDictionary
// turns dictionary encoding off (see parquetio.WriteConfig).
type WriteSpec struct {
	Path         string `json:"path"`
	Compression  string `json:"compression,omitempty"`
	NoDictionary bool   `json:"no_dictionary,omitempty"`
	// DeferSync: the node renames the file into place without syncing it
	// or its directory, and the client makes it durable later
	// (parquetio.SyncFiles), for all of a job's files at once.
	DeferSync bool `json:"defer_sync,omitempty"`
}

// JoinSpec is a dfops.JoinSpec as JSON: left_on[i] is compared with
// right_on[i]; how is inner (default), left, right or outer; suffixes are
// the left and right suffixes of clashing column names (default _x, _y).
type JoinSpec struct {
	LeftOn   []string `json:"left_on"`
	RightOn  []string `json:"right_on"`
	How      string   `json:"how,omitempty"`
	Suffixes []string `json:"suffixes,omitempty"`
}

// OpStats is the app metadata of the first record batch of an op's stream
// (an op whose result is empty streams one empty batch to carry it).
type OpStats struct {
	// Node is the node that ran the operation.
	Node string `json:"node"`
	// InputRows are the rows of each input partition, in Shuffles order.
	InputRows []int64 `json:"input_rows"`
	// Remote is how many input partitions the node read from another node
	// (0 when it owns them all, as co-partitioned shuffles at their owner).
	Remote int `json:"remote"`
	// Passes, for a sort, is how many times the node read its input after
	// a first read of the key column, when the sort did not fit the node's
	// op budget and ran in passes (absent otherwise).
	Passes int `json:"passes,omitempty"`
	// OutputRows and FileBytes, for an op with Write, are the rows and
	// bytes of the file written (absent otherwise).
	OutputRows int64 `json:"output_rows,omitempty"`
	FileBytes  int64 `json:"file_bytes,omitempty"`
}
