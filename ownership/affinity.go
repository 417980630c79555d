package ownership

import (
	"cmp"
	"container/heap"
	"slices"
)

// Affinity says that Member holds Bytes of partition Partition's input.
type Affinity struct {
	Partition int
	Member    string
	Bytes     int64
}

// ByAffinity returns an epoch-0 map that gives each partition to the member
// holding most of its input bytes, under a balance bound: a member takes a
// partition while it owns fewer than ceil(P/N)+1 partitions, or while its
// byte share stays within 10% of even (its partitions' bytes at most
// 1.1/N of all the bytes). So every member ends with at most ceil(P/N)+1
// partitions or at most 1.1/N of the bytes: many small partitions may
// stay where they are if they do not add up to much.
//
// The rule, deterministic from its arguments (every node derives the same
// map): the affinities, summed per (partition, member), are taken in
// decreasing bytes (ties: lower partition first, then the member's place in
// the seed-derived order New deals in); each gives its partition to its
// member if the partition has no owner yet and the member is within the
// bound. A partition's bytes are the sum of its affinities. Partitions left
// over go, ascending, to the member with the fewest partitions (ties in
// seed order). The backup of a partition is, as in New, a member after its
// owner in the seed order, shifted by how many partitions that owner
// already has, so one owner's backups spread over the others. Affinities
// naming non-members or partitions out of range are ignored. Without
// applies to the result as to any map: a loss moves only the lost member's
// partitions. It takes O(A log A + P log N) time for A affinities.
func ByAffinity(seed string, members []string, partitions int, aff []Affinity) (*Map, error) {
	m, err := New(seed, members, partitions)
	if err != nil {
		return nil, err
	}
	owners, loads := m.greedy(aff)
	m.fillLeftovers(owners, loads)
	m.owners, m.backups = owners, m.spreadBackups(owners)
	return m, nil
}

// bound is the balance bound of ByAffinity over N members.
type bound struct {
	count int   // ceil(P/N)+1 partitions
	total int64 // bytes of all partitions
	n     int64
}

// newBound returns the bound of p partitions of total bytes over n members.
func newBound(p, n int, total int64) bound {
	return bound{count: (p+n-1)/n + 1, total: total, n: int64(n)}
}

// admits says whether a member owning count partitions of owned bytes may
// take one of size bytes: under the count, or with its share of the bytes
// then within 10% of even (owned+size <= 1.1 total/N, in integers).
func (b bound) admits(count int, owned, size int64) bool {
	return count < b.count || (owned+size)*10*b.n <= b.total*11
}

// greedy assigns partitions to their heaviest members within the bound; -1
// where none.
func (m *Map) greedy(aff []Affinity) (owners []int32, loads []int) {
	owners, loads = slices.Repeat([]int32{-1}, m.parts), make([]int, len(m.members))
	sums := m.sumAffinities(aff)
	sizes, total := partitionBytes(m.parts, sums)
	b, owned := newBound(m.parts, len(m.members), total), make([]int64, len(m.members))
	for _, a := range sums {
		if owners[a.p] < 0 && b.admits(loads[a.m], owned[a.m], sizes[a.p]) {
			owners[a.p] = a.m
			loads[a.m]++
			owned[a.m] += sizes[a.p]
		}
	}
	return owners, loads
}

// partitionBytes returns each partition's bytes (the sum of its
// affinities) and their total.
func partitionBytes(parts int, sums []pm) (sizes []int64, total int64) {
	sizes = make([]int64, parts)
	for _, a := range sums {
		sizes[a.p] += a.bytes
		total += a.bytes
	}
	return sizes, total
}

// pm is an affinity by partition and member index.
type pm struct {
	p     int
	m     int32
	bytes int64
}

// sumAffinities sums the affinities per (partition, member) and sorts them
// in the greedy's order.
func (m *Map) sumAffinities(aff []Affinity) []pm {
	rank := make([]int, len(m.members))
	for k, i := range m.order {
		rank[i] = k
	}
	var out []pm
	for _, a := range aff {
		if i := m.memberIdx(a.Member); i >= 0 && m.inRange(a.Partition) && a.Bytes > 0 {
			out = append(out, pm{p: a.Partition, m: int32(i), bytes: a.Bytes})
		}
	}
	slices.SortFunc(out, func(x, y pm) int { return cmp.Or(cmp.Compare(x.p, y.p), cmp.Compare(x.m, y.m)) })
	out = mergeSums(out)
	slices.SortFunc(out, func(x, y pm) int {
		return cmp.Or(cmp.Compare(y.bytes, x.bytes), cmp.Compare(x.p, y.p), cmp.Compare(rank[x.m], rank[y.m]))
	})
	return out
}

// mergeSums merges adjacent entries of one (partition, member).
func mergeSums(xs []pm) []pm {
	out := xs[:0]
	for _, x := range xs {
		if n := len(out); n > 0 && out[n-1].p == x.p && out[n-1].m == x.m {
			out[n-1].bytes += x.bytes
			continue
		}
		out = append(out, x)
	}
	return out
}

// fillLeftovers gives each partition without an owner, ascending, to the
// least loaded member (ties in seed order).
func (m *Map) fillLeftovers(owners []int32, loads []int) {
	h := &loadHeap{}
	for k, i := range m.order {
		h.items = append(h.items, loadItem{member: i, load: loads[i], rank: k})
	}
	heap.Init(h)
	for p, o := range owners {
		if o >= 0 {
			continue
		}
		top := &h.items[0]
		owners[p] = top.member
		top.load++
		heap.Fix(h, 0)
	}
}

// spreadBackups returns each partition's backup: the member 1 + (c mod
// (N-1)) places after its owner in the seed order, c counting the owner's
// earlier partitions; -1 with one member.
func (m *Map) spreadBackups(owners []int32) []int32 {
	n := len(m.order)
	backups := slices.Repeat([]int32{-1}, len(owners))
	if n == 1 {
		return backups
	}
	pos := make([]int, n)
	for k, i := range m.order {
		pos[i] = k
	}
	count := make([]int, n)
	for p, o := range owners {
		backups[p] = m.order[(pos[o]+1+count[o]%(n-1))%n]
		count[o]++
	}
	return backups
}

type loadItem struct {
	member int32
	load   int
	rank   int
}

// loadHeap orders members by load, then by seed order.
type loadHeap struct{ items []loadItem }

func (h *loadHeap) Len() int { return len(h.items) }
func (h *loadHeap) Less(i, j int) bool {
	a, b := h.items[i], h.items[j]
	return a.load < b.load || (a.load == b.load && a.rank < b.rank)
}
func (h *loadHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *loadHeap) Push(x any)    { h.items = append(h.items, x.(loadItem)) }
func (h *loadHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}
