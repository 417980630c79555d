package service

import (
	"context"
	"fmt"
	"hash/crc32"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/shufflenode/shufflenode/barrier"
	"github.com/shufflenode/shufflenode/control"
	"github.com/shufflenode/shufflenode/shard"
	"github.com/shufflenode/shufflenode/shuffle"
	"github.com/shufflenode/shufflenode/spill"
	"github.com/shufflenode/shufflenode/table"
	"github.com/shufflenode/shufflenode/wire"
)

// recvState is a receiver's progress on one (task, attempt).
type recvState struct {
	epoch     uint64          // epoch of the attempt's messages
	seen      map[uint32]bool // entries stored or being stored, by seq
	stored    uint32          // entries fully stored
	held      barrier.Totals
	end       *shard.End
	committed bool
}

// receive handles a shards message: store its entries, then its end markers.
func (s *Service) receive(ctx context.Context, m *shard.Msg) error {
	sh, err := s.lookup(m.Shuffle)
	if err != nil {
		return shuffle.Refuse(wire.RefuseUnknownShuffle, err)
	}
	sh.Touch()
	rt := sh.Route()
	if err := s.checkEpoch(sh, rt, m.Epoch); err != nil {
		return err
	}
	if err := sh.OpenErr(); err != nil {
		return shuffle.Refuse(wire.RefuseSealed, err)
	}
	for i := range m.Entries {
		if err := s.receiveEntry(sh, rt, &m.Entries[i]); err != nil {
			return err
		}
	}
	for _, e := range m.Ends {
		if err := s.receiveEnd(sh, rt, e); err != nil {
			return err
		}
	}
	return nil
}

// checkEpoch refuses a message of an older epoch for good and asks a sender
// that is ahead of this node (it applied a newer epoch first) to retry.
func (s *Service) checkEpoch(sh *entry, rt *shuffle.Route, epoch uint64) error {
	switch {
	case epoch < rt.Epoch:
		return shuffle.Refuse(wire.RefuseStaleEpoch, fmt.Errorf("shuffle %s: message of epoch %d, node %s is at epoch %d", sh.ID(), epoch, s.Name(), rt.Epoch))
	case epoch > rt.Epoch:
		return &shuffle.Busy{After: 20 * time.Millisecond, Err: fmt.Errorf("shuffle %s: node %s is still at epoch %d (message of %d)", sh.ID(), s.Name(), rt.Epoch, epoch)}
	}
	return nil
}

// receiveEntry stores one entry's pieces unless it was seen before.
func (s *Service) receiveEntry(sh *entry, rt *shuffle.Route, e *shard.Entry) error {
	if err := sh.checkEntry(rt, e); err != nil {
		return shuffle.Refuse(wire.RefuseBadRequest, err)
	}
	if !sh.claim(e, rt.Epoch) {
		return nil // a resent entry: already stored
	}
	store := s.storeEntry
	if sh.Array != nil {
		store = s.storeArrayEntry
	}
	if err := store(sh, e); err != nil {
		sh.unclaim(e)
		return err
	}
	return s.stored(sh, e)
}

// checkEntry refuses an entry for a task out of range or a partition this
// node does not own in the entry's epoch.
func (sh *entry) checkEntry(rt *shuffle.Route, e *shard.Entry) error {
	if e.Task >= uint64(sh.Spec.Tasks) {
		return fmt.Errorf("shuffle %s: task %d out of range", sh.ID(), e.Task)
	}
	for _, r := range e.Runs {
		if int(r.Partition) >= sh.Spec.Partitions || !rt.Held.Has(int(r.Partition)) {
			return fmt.Errorf("%w: shuffle %s task %d: partition %d", ErrNotOwner, sh.ID(), e.Task, r.Partition)
		}
	}
	return nil
}

// claim marks e (of an attempt running in epoch) as being stored; false
// if it was seen before.
func (sh *entry) claim(e *shard.Entry, epoch uint64) bool {
	sh.Lock()
	defer sh.Unlock()
	rs := sh.recvState(shuffle.AttemptKey{Task: e.Task, Attempt: e.Attempt})
	if rs.seen[e.Seq] {
		return false
	}
	rs.seen[e.Seq] = true
	rs.epoch = epoch
	return true
}

func (sh *entry) unclaim(e *shard.Entry) {
	sh.Lock()
	defer sh.Unlock()
	delete(sh.recvState(shuffle.AttemptKey{Task: e.Task, Attempt: e.Attempt}).seen, e.Seq)
}

func (sh *entry) recvState(k shuffle.AttemptKey) *recvState {
	rs, ok := sh.recv[k]
	if !ok {
		rs = &recvState{seen: map[uint32]bool{}}
		sh.recv[k] = rs
	}
	return rs
}

// storeEntry decodes an entry and stores one piece per output partition.
func (s *Service) storeEntry(sh *entry, e *shard.Entry) error {
	data := append([]byte(nil), e.Data...) // the frame's buffer is not ours to keep
	rec, err := sh.Codec.Decode(data)
	if err != nil {
		return shuffle.Refuse(wire.RefuseBadRequest, fmt.Errorf("shuffle %s task %d: %w", sh.ID(), e.Task, err))
	}
	defer rec.Release()
	if err := checkRuns(sh, e, rec); err != nil {
		return shuffle.Refuse(wire.RefuseBadRequest, err)
	}
	pieces := make([]piece, len(e.Runs)) // one allocation for the entry's pieces
	items := make([]spill.Item, len(e.Runs))
	cols := table.ViewOf(rec) // resolved once, shared by the entry's pieces
	var off int64
	for i, r := range e.Runs {
		rec.Retain()
		v := &pieces[i]
		*v = piece{rec: rec, cols: cols, off: off, rows: int64(r.Count), codec: sh.Codec}
		v.size = pieceOverhead + int64(len(data))*int64(r.Count)/max(rec.NumRows(), 1)
		off += int64(r.Count)
		items[i] = spill.Item{Key: spill.Key{Partition: r.Partition, Task: e.Task, Attempt: e.Attempt, Seq: e.Seq}, Value: v}
	}
	return s.putPieces(sh, e, items)
}

// putPieces stores the pieces of one entry. A duplicate (a resent entry
// whose first copy was stored) is released and skipped; on any other error
// the store took none of them and all are released.
func (s *Service) putPieces(sh *entry, e *shard.Entry, items []spill.Item) error {
	err := s.store.PutMany(sh.ID(), items, func(i int) { items[i].Value.Release() })
	if err != nil {
		for _, it := range items {
			it.Value.Release()
		}
		return shuffle.Refuse(wire.RefuseFailed, fmt.Errorf("shuffle %s task %d on node %s: %w", sh.ID(), e.Task, s.Name(), err))
	}
	return nil
}

// checkRuns checks that the runs cover the record's rows exactly.
func checkRuns(sh *entry, e *shard.Entry, rec arrow.Record) error {
	var n uint64
	for _, r := range e.Runs {
		n += r.Count
	}
	if n != uint64(rec.NumRows()) {
		return fmt.Errorf("shuffle %s task %d: runs cover %d rows, record has %d", sh.ID(), e.Task, n, rec.NumRows())
	}
	return nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// stored counts a stored entry and commits if the attempt is complete.
func (s *Service) stored(sh *entry, e *shard.Entry) error {
	rows := e.Rows()
	sh.Lock()
	rs := sh.recvState(shuffle.AttemptKey{Task: e.Task, Attempt: e.Attempt})
	rs.stored++
	rs.held.Add(rows, uint64(len(e.Data)), crc32.Checksum(e.Data, castagnoli))
	commit := sh.tryCommit(shuffle.AttemptKey{Task: e.Task, Attempt: e.Attempt}, rs)
	sh.Unlock()
	return s.afterCommit(sh, commit)
}

// receiveEnd records an end marker and commits if the attempt is complete.
func (s *Service) receiveEnd(sh *entry, rt *shuffle.Route, e shard.End) error {
	if e.Task >= uint64(sh.Spec.Tasks) {
		return shuffle.Refuse(wire.RefuseBadRequest, fmt.Errorf("shuffle %s: end of task %d out of range", sh.ID(), e.Task))
	}
	k := shuffle.AttemptKey{Task: e.Task, Attempt: e.Attempt}
	sh.Lock()
	rs := sh.recvState(k)
	if rs.end == nil {
		rs.end = &e
		rs.epoch = rt.Epoch
	}
	commit := sh.tryCommit(k, rs)
	sh.Unlock()
	return s.afterCommit(sh, commit)
}

// commitNote is a commit to report to the coordinator.
type commitNote struct {
	k     shuffle.AttemptKey
	epoch uint64
	held  barrier.Totals
}

// tryCommit commits k if its marker and all its entries are in, for the
// partitions this node holds (owns or backs up) in the attempt's epoch. An attempt of an older
// epoch never commits: it may lack partitions that moved here since, and
// its task runs again. Called with sh.mu held.
func (sh *entry) tryCommit(k shuffle.AttemptKey, rs *recvState) *commitNote {
	if rs.committed || rs.end == nil || rs.stored != rs.end.Pieces || rs.epoch != sh.RouteLocked().Epoch {
		return nil
	}
	if _, err := sh.ledger.Commit(k.Task, k.Attempt, sh.RouteLocked().Held); err != nil {
		return nil // unreachable: task range was checked
	}
	rs.committed = true
	return &commitNote{k: k, epoch: rs.epoch, held: rs.held}
}

// afterCommit reports a commit to the coordinator in the background.
func (s *Service) afterCommit(sh *entry, n *commitNote) error {
	if n == nil {
		return nil
	}
	held := n.held
	c := control.Msg{Op: control.OpCommitted, Shuffle: sh.ID(), Epoch: n.epoch, Node: s.Name(), Task: n.k.Task, Attempt: n.k.Attempt, Held: &held}
	s.background(func(ctx context.Context) {
		err := control.Retry(ctx, 8, func() error { _, err := s.request(ctx, sh.Coordinator, c); return err })
		if err != nil {
			s.log.Error("reporting commit failed", "shuffle", sh.ID(), "task", n.k.Task, "attempt", n.k.Attempt, "err", err)
		}
	})
	return nil
}

// pieceOverhead is what a piece in memory costs beyond its share of the entry's bytes: this
// struct (48 bytes), the spill store's index entry (~90 bytes) and its key (16). It is
// charged against the budget so that many small pieces cannot take memory far past it.
const pieceOverhead = 160

// piece is one output partition's rows of one entry, held in memory: rows
// [off, off+rows) of the decoded entry, which every piece of the entry
// shares (one reference each). Reads gather pieces straight into output
// batches; only spilling cuts a piece out.
type piece struct {
	rec       arrow.Record
	cols      []table.ColumnView // rec's column views, shared by the entry's pieces
	off, rows int64
	size      int64
	codec     *table.Codec
}

// Size implements spill.Value.
func (p *piece) Size() int64 { return p.size }

// MarshalSpill implements spill.Value: the piece's rows as Arrow IPC.
func (p *piece) MarshalSpill() ([]byte, error) { return p.AppendSpill(nil) }

// AppendSpill implements spill.SpillAppender: it encodes the piece's rows
// straight into the spill store's group.
func (p *piece) AppendSpill(dst []byte) ([]byte, error) {
	s := table.Slice(p.rec, p.off, p.rows)
	defer s.Release()
	return p.codec.AppendRecord(dst, s)
}

// Release implements spill.Value.
func (p *piece) Release() { p.rec.Release() }
