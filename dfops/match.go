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
