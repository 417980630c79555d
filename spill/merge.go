package spill

// merger merges a partition's in-memory pieces (sorted) with its disk entries (in key order)
// into one Key-ordered stream of callbacks. A key present in both is taken from memory: the
// disk copy is a leftover of a spill that failed after part of it reached the disk.
type merger struct {
	mem       []*piece
	next      int // index of the first memory piece not yet emitted
	fn        func(k Key, mem Value, disk []byte) error
	fnErr     error // first error from fn: stops the merge
	prefixLen int   // length of the shuffle prefix of disk keys
}

// onDisk is the Disk.Scan callback.
func (m *merger) onDisk(key, value []byte) error {
	k, err := decodeTail(key, m.prefixLen)
	if err != nil {
		return err
	}
	if err := m.memBefore(k); err != nil {
		return err
	}
	if m.next < len(m.mem) && m.mem[m.next].key == k {
		return nil // shadowed by the in-memory copy, emitted later
	}
	if value == nil {
		value = []byte{} // an empty spilled value is still "set"
	}
	return m.call(k, nil, value)
}

// memBefore emits the memory pieces that sort before k.
func (m *merger) memBefore(k Key) error {
	for m.next < len(m.mem) && m.mem[m.next].key.Compare(k) < 0 {
		p := m.mem[m.next]
		m.next++
		if err := m.call(p.key, p.value, nil); err != nil {
			return err
		}
	}
	return nil
}

// finish emits the memory pieces left after the disk entries.
func (m *merger) finish() error {
	for ; m.next < len(m.mem); m.next++ {
		p := m.mem[m.next]
		if err := m.call(p.key, p.value, nil); err != nil {
			return err
		}
	}
	return nil
}

// call runs fn and remembers its error.
func (m *merger) call(k Key, mem Value, disk []byte) error {
	if err := m.fn(k, mem, disk); err != nil {
		m.fnErr = err
		return err
	}
	return nil
}
