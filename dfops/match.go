package dfops

// pairs are the output rows of a join as row numbers into side a and side
// b; -1 means the row has no partner on that side (nulls there).
type pairs struct {
	a, b []int32
}

func (p *pairs) add(a, b int32) {
	p.a = append(p.a, a)
	p.b = append(p.b, b)
}

// match joins a with b and returns the pairs in a-major order: a's rows in
// order, each with its b matches in b order (one pair with b = -1 when it
// has none and keepA); then, when keepB, b's unmatched rows in order. The
// hash table is built on the side with fewer rows.
func match(a, b *keys, keepA, keepB bool) pairs {
	if b.n <= a.n {
		return probeA(a, b, buildTable(b), keepA, keepB)
	}
	return probeB(a, b, buildTable(a), keepA, keepB)
}

// probeA walks a in order through a table on b.
func probeA(a, b *keys, t *hashTable, keepA, keepB bool) pairs {
	if !keepB {
		return probe(a, t, keepA, nil)
	}
	matchedB := make([]bool, b.n)
	p := probe(a, t, keepA, matchedB)
	addUnmatchedB(&p, matchedB)
	return p
}

// probe returns a's rows in order, each with its matches in t in t's row
// order (one pair with -1 when it has none and keepA), as pairs (a row, t
// row), and marks the matched rows of t in matched unless it is nil.
func probe(a *keys, t *hashTable, keepA bool, matched []bool) pairs {
	p := pairs{a: make([]int32, 0, a.n), b: make([]int32, 0, a.n)} // about one pair a row, as for a key join
	for i := range int32(a.n) {
		r, more := t.lookup(a, i)
		if r < 0 && keepA {
			p.add(i, -1)
		}
		for ; r >= 0; r = t.after(r, more) {
			p.add(i, r)
			if matched != nil {
				matched[r] = true
			}
		}
	}
	return p
}

// probeCursor is probe in steps: it walks a's rows in order through t and
// hands out their pairs (the same, in the same order) at most max at a
// time, so a key with many rows on both sides never has all its pairs in
// memory at once: a join's pairs grow as the product of a key's rows.
type probeCursor struct {
	a       *keys
	t       *hashTable
	keepA   bool
	matched []bool // t's matched rows, marked unless nil
	i       int32  // the a row being walked
	r       int32  // its next match in t
	more    bool   // the lookup's more (see hashTable.after)
	inRow   bool   // whether row i was looked up
}

// fill sets p to the next pairs, at most max, reusing p's arrays, and
// reports whether there were any.
func (c *probeCursor) fill(p *pairs, max int) bool {
	p.a, p.b = p.a[:0], p.b[:0]
	for len(p.a) < max && c.i < int32(c.a.n) {
		if !c.inRow {
			c.r, c.more = c.t.lookup(c.a, c.i)
			c.inRow = true
		}
		switch {
		case c.r < 0 && c.keepA:
			p.add(c.i, -1)
		case c.r >= 0:
			p.add(c.i, c.r)
			if c.matched != nil {
				c.matched[c.r] = true
			}
			if c.r = c.t.after(c.r, c.more); c.r >= 0 {
				continue
			}
		}
		c.i, c.inRow, c.more = c.i+1, false, false
	}
	return len(p.a) > 0
}

func addUnmatchedB(p *pairs, matchedB []bool) {
	for j, m := range matchedB {
		if !m {
			p.add(-1, int32(j))
		}
	}
}

// probeB walks b in order through a table on a, then lays the pairs out in
// a-major order with a counting sort (stable, so each a row's matches stay
// in b order).
func probeB(a, b *keys, t *hashTable, keepA, keepB bool) pairs {
	heads := make([]int32, b.n)
	count := make([]int, a.n+1)
	matchedB := make([]bool, b.n)
	for j := range int32(b.n) {
		heads[j], _ = t.lookup(b, j) // next is -1 after a key's last row, whether or not it has more
		matchedB[j] = heads[j] >= 0
		for r := heads[j]; r >= 0; r = t.next[r] {
			count[r+1]++
		}
	}
	pos, total := startPositions(count, keepA)
	p := pairs{a: make([]int32, total), b: make([]int32, total)}
	for j, h := range heads {
		for r := h; r >= 0; r = t.next[r] {
			p.a[pos[r]], p.b[pos[r]] = r, int32(j)
			pos[r]++
		}
	}
	fillUnmatchedA(&p, count, pos, keepA)
	if keepB {
		addUnmatchedB(&p, matchedB)
	}
	return p
}

// startPositions turns count (count[r+1] = matches of a row r) into the
// output position of each a row's first pair; with keepA a row without
// matches still takes one position. It returns the positions and the total.
func startPositions(count []int, keepA bool) ([]int, int) {
	pos := make([]int, len(count)-1)
	total := 0
	for r := range pos {
		pos[r] = total
		n := count[r+1]
		if n == 0 && keepA {
			n = 1
		}
		total += n
	}
	return pos, total
}

// fillUnmatchedA writes the (r, -1) pairs of a rows without matches.
func fillUnmatchedA(p *pairs, count, pos []int, keepA bool) {
	if !keepA {
		return
	}
	for r := range pos {
		if count[r+1] == 0 {
			p.a[pos[r]], p.b[pos[r]] = int32(r), -1
		}
	}
}
