package control

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/shufflenode/shufflenode/barrier"
)

// binaryMagic starts a control message in the compact binary form (a JSON
// body starts with '{' or white space, never with it).
const binaryMagic = 0xB1

// Bounds of the binary form, checked before anything is allocated.
const (
	maxBinString = 4096  // an op, a shuffle ID, a node name, a reason
	maxBinSent   = 4096  // receivers in one attempt's totals
	maxBinCommit = 16384 // commits in one report message
)

// Encode encodes c for the wire: the begin, done, committed and tasks
// reports (the messages sent once or more per task) in a compact binary
// form, any other message as JSON. Decode reads both.
func Encode(c *Msg) ([]byte, error) {
	if !compact(c) {
		return json.Marshal(c)
	}
	b := make([]byte, 1, 64+40*len(c.Commits)+48*len(c.Tasks)+32*len(c.Sent)) // most reports in one allocation
	b[0] = binaryMagic
	b = putStrings(b, c.Op, c.Shuffle, c.Node, c.Differs)
	b = binary.AppendUvarint(b, c.Epoch)
	b = binary.AppendUvarint(b, c.Task)
	b = binary.AppendUvarint(b, uint64(c.Attempt))
	b = putHeld(b, c.Held)
	b = putSent(b, c.Sent)
	b = binary.AppendUvarint(b, uint64(len(c.Commits)))
	for i := range c.Commits {
		b = putCommit(b, &c.Commits[i])
	}
	b = binary.AppendUvarint(b, uint64(len(c.Tasks)))
	for i := range c.Tasks {
		b = putTask(b, &c.Tasks[i])
	}
	return b, nil
}

// compact says whether c has the binary form: a report with none of the
// fields the binary form leaves out, and strings within its bounds.
func compact(c *Msg) bool {
	switch c.Op {
	case OpBegin, OpDone, OpCommitted, OpTasks:
	default:
		return false
	}
	rest := *c
	rest.Op, rest.Shuffle, rest.Node, rest.Differs = "", "", "", ""
	rest.Epoch, rest.Task, rest.Attempt, rest.Held, rest.Sent, rest.Commits, rest.Tasks = 0, 0, 0, nil, nil, nil, nil
	if rest.Term != 0 || rest.Lost != nil || rest.Reopen || rest.Spec != nil || rest.Coordinator != "" || rest.Members != nil || rest.Reason != "" {
		return false
	}
	return len(c.Shuffle) <= maxBinString && len(c.Node) <= maxBinString && len(c.Differs) <= maxBinString &&
		len(c.Sent) <= maxBinSent && len(c.Commits) <= maxBinCommit && len(c.Tasks) <= MaxTaskBatch && boundedParts(c)
}

// boundedParts checks the strings and maps inside c's commits and tasks.
func boundedParts(c *Msg) bool {
	for i := range c.Commits {
		if len(c.Commits[i].Differs) > maxBinString {
			return false
		}
	}
	for i := range c.Tasks {
		if len(c.Tasks[i].Op) > maxBinString || len(c.Tasks[i].Sent) > maxBinSent {
			return false
		}
	}
	return true
}

func putStrings(b []byte, ss ...string) []byte {
	for _, s := range ss {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

func putTotals(b []byte, t barrier.Totals) []byte {
	b = binary.AppendUvarint(b, t.Pieces)
	b = binary.AppendUvarint(b, t.Rows)
	b = binary.AppendUvarint(b, t.Bytes)
	return binary.LittleEndian.AppendUint64(b, t.Checksum)
}

func putHeld(b []byte, h *barrier.Totals) []byte {
	if h == nil {
		return append(b, 0)
	}
	return putTotals(append(b, 1), *h)
}

// putSent writes a totals map; its order does not matter to the decoder.
func putSent(b []byte, m map[string]barrier.Totals) []byte {
	b = binary.AppendUvarint(b, uint64(len(m)))
	for k, t := range m {
		b = putTotals(putStrings(b, k), t)
	}
	return b
}

func putCommit(b []byte, c *Committed) []byte {
	b = binary.AppendUvarint(b, c.Task)
	b = binary.AppendUvarint(b, uint64(c.Attempt))
	b = binary.AppendUvarint(b, c.Epoch)
	b = putTotals(b, c.Held)
	return putStrings(b, c.Differs)
}

func putTask(b []byte, t *TaskReport) []byte {
	b = putStrings(b, t.Op)
	b = binary.AppendUvarint(b, t.Task)
	b = binary.AppendUvarint(b, uint64(t.Attempt))
	b = binary.AppendUvarint(b, t.Epoch)
	return putSent(b, t.Sent)
}

// reader reads the binary form; the first error sticks and every later
// read returns zero values.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: binary control message: %s", ErrBadMsg, what)
	}
	r.b = nil
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail("bad varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) uint32() uint32 {
	v := r.uvarint()
	if v > 1<<32-1 {
		r.fail("attempt over 32 bits")
		return 0
	}
	return uint32(v)
}

func (r *reader) string() string {
	n := r.uvarint()
	if n > maxBinString || n > uint64(len(r.b)) {
		r.fail("string too long")
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	if !utf8.ValidString(s) {
		r.fail("a string not in UTF-8")
		return ""
	}
	return s
}

// count reads a count bounded by limit and by the bytes left (each item
// takes at least min bytes).
func (r *reader) count(limit, min int) int {
	n := r.uvarint()
	if n > uint64(limit) || n*uint64(min) > uint64(len(r.b)) {
		r.fail("count over its bound")
		return 0
	}
	return int(n)
}

func (r *reader) totals() barrier.Totals {
	t := barrier.Totals{Pieces: r.uvarint(), Rows: r.uvarint(), Bytes: r.uvarint()}
	if len(r.b) < 8 {
		r.fail("short checksum")
		return t
	}
	t.Checksum = binary.LittleEndian.Uint64(r.b)
	r.b = r.b[8:]
	return t
}

func (r *reader) held() *barrier.Totals {
	switch r.byte() {
	case 0:
		return nil
	case 1:
		t := r.totals()
		return &t
	}
	r.fail("bad held flag")
	return nil
}

func (r *reader) byte() byte {
	if len(r.b) == 0 {
		r.fail("short message")
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

// sent reads a totals map; none is nil. A repeated receiver is refused.
func (r *reader) sent() map[string]barrier.Totals {
	n := r.count(maxBinSent, 12)
	if n == 0 {
		return nil
	}
	m := make(map[string]barrier.Totals, n)
	for range n {
		k := r.string()
		if _, dup := m[k]; dup {
			r.fail("a receiver twice in totals")
		}
		m[k] = r.totals()
	}
	return m
}

func (r *reader) commit() Committed {
	return Committed{Task: r.uvarint(), Attempt: r.uint32(), Epoch: r.uvarint(), Held: r.totals(), Differs: r.string()}
}

func (r *reader) task() TaskReport {
	return TaskReport{Op: r.string(), Task: r.uvarint(), Attempt: r.uint32(), Epoch: r.uvarint(), Sent: r.sent()}
}

// decodeBinary decodes the binary form (b without its magic byte).
func decodeBinary(b []byte) (*Msg, error) {
	r := &reader{b: b}
	c := &Msg{Op: r.string(), Shuffle: r.string(), Node: r.string(), Differs: r.string()}
	c.Epoch, c.Task, c.Attempt = r.uvarint(), r.uvarint(), r.uint32()
	c.Held, c.Sent = r.held(), r.sent()
	if n := r.count(maxBinCommit, 12); n > 0 {
		c.Commits = make([]Committed, n)
		for i := range c.Commits {
			c.Commits[i] = r.commit()
		}
	}
	if n := r.count(MaxTaskBatch, 5); n > 0 {
		c.Tasks = make([]TaskReport, n)
		for i := range c.Tasks {
			c.Tasks[i] = r.task()
		}
	}
	if r.err == nil && len(r.b) > 0 {
		r.fail(fmt.Sprintf("%d bytes after the message", len(r.b)))
	}
	if r.err == nil && !compact(c) {
		r.fail(fmt.Sprintf("op %q has no binary form", c.Op))
	}
	return c, r.err
}
