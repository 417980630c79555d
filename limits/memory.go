package limits

// Memory splits one node's memory budget (service.Config.MemoryLimit)
// among its parts: the send buffers, the spill store, and the batches
// that puts, reads and incoming shard messages hold.
type Memory struct {
	// Limit is the node's memory budget in bytes.
	Limit int64
	// BufferBytes is the size at which a send buffer is sent, before
	// SendBuffer bounds it.
	BufferBytes int64
}

// Send is the part of Limit that goes to send buffers: a quarter.
func (m Memory) Send() int64 { return m.Limit / 4 }

// Store is the part of Limit that goes to the spill store's memory.
func (m Memory) Store() int64 { return m.Limit - m.Send() }

// SendBuffer is the size at which a send buffer is sent: BufferBytes, at
// most an eighth of the send budget.
func (m Memory) SendBuffer() int64 { return min(m.BufferBytes, max(m.Send()/8, 1)) }

// Input is what the input batches of the puts in progress may hold at
// once, read from their clients and being cut into shards (each batch
// counts twice its Arrow bytes): an eighth of Limit, and at least two
// send buffers. Over it, puts wait before they read their next batch; a
// batch larger than it is read alone.
func (m Memory) Input() int64 { return max(m.Limit/8, 2*m.SendBuffer()) }

// Inbound is what the shard messages being received should hold at once,
// whatever the number of senders: a quarter of Limit, and at least two
// send buffers, so that the cluster's senders cannot together take memory
// far past the budget.
func (m Memory) Inbound() int64 { return max(m.Limit/4, 2*m.SendBuffer()) }

// Output is what the output batches of the reads in progress may hold at
// once, gathered from their partitions and being sent: an eighth of
// Limit, and at least two send buffers. Over it, reads wait before they
// gather their next batch.
func (m Memory) Output() int64 { return max(m.Limit/8, 2*m.SendBuffer()) }
