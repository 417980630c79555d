package ownership

import (
	"fmt"
	"math"
	"slices"
)

// Without returns the next epoch's map: the lost members are gone and their
// partitions are spread over the survivors; every other partition keeps its
// owner. See the package documentation for what is guaranteed about balance
// and backups. The result depends only on m and the set of lost names (not
// their order), so every node applying the same losses to the same map gets
// the same result. It takes O(P + N log N) time and O(P) memory.
func (m *Map) Without(lost ...string) (*Map, error) {
	remap, survivors, err := m.survivors(lost)
	if err != nil {
		return nil, err
	}
	next := &Map{seed: m.seed, members: survivors, parts: m.parts, epoch: m.epoch + 1}
	ord := newRNG(m.seed, uint64(next.epoch)).permutation(len(survivors))
	next.owners = m.moveOwners(remap, ord)
	next.backups = m.moveBackups(remap, next.owners, ord)
	return next, nil
}

// survivors checks lost and returns the old-to-new member index map (-1 for
// a lost member) and the sorted surviving names.
func (m *Map) survivors(lost []string) ([]int32, []string, error) {
	if len(lost) == 0 {
		return nil, nil, ErrNothingLost
	}
	gone := make([]bool, len(m.members))
	for _, name := range lost {
		i := m.memberIdx(name)
		if i < 0 {
			return nil, nil, fmt.Errorf("%w: %q (epoch %d)", ErrUnknownMember, name, m.epoch)
		}
		gone[i] = true
	}
	remap := make([]int32, len(m.members))
	var survivors []string
	for i, name := range m.members {
		remap[i] = -1
		if !gone[i] {
			remap[i] = int32(len(survivors))
			survivors = append(survivors, name)
		}
	}
	if len(survivors) == 0 {
		return nil, nil, fmt.Errorf("%w: all %d members lost", ErrNoMembers, len(m.members))
	}
	return remap, survivors, nil
}

// moveOwners keeps every surviving owner and gives the lost members'
// partitions to survivors: balanced by waterFill, to the partition's old
// backup where its quota allows, the rest dealt round-robin in ord order.
func (m *Map) moveOwners(remap, ord []int32) []int32 {
	owners := make([]int32, m.parts)
	loads := make([]int, len(ord))
	var moved []int
	for p := range owners {
		owners[p] = remap[m.ownerIdx(p)]
		if owners[p] < 0 {
			moved = append(moved, p)
		} else {
			loads[owners[p]]++
		}
	}
	quota := waterFill(loads, len(moved), ord)
	rest := moved[:0]
	for _, p := range moved {
		if b := m.backupIdx(p); b >= 0 && remap[b] >= 0 && quota[remap[b]] > 0 {
			owners[p] = remap[b]
			quota[remap[b]]--
		} else {
			rest = append(rest, p)
		}
	}
	deal(rest, owners, quota, ord)
	return owners
}

// moveBackups keeps every backup that survives and differs from the new
// owner, and gives the other partitions a new backup (never their owner),
// with backup loads balanced by waterFill. When one member owns so many of
// the partitions needing a backup that the others cannot take them all at
// balanced loads, a few surviving backups are moved to it (release).
func (m *Map) moveBackups(remap, owners, ord []int32) []int32 {
	backups, loads, needBy := m.keptBackups(remap, owners, len(ord))
	if len(ord) == 1 {
		return backups
	}
	quota := waterFill(loads, countAll(needBy), ord)
	for {
		o, excess := overloaded(needBy, quota)
		switch {
		case excess == 0:
			assignBackups(needBy, quota, ord, backups)
			return backups
		case release(int32(o), excess, owners, backups, loads, needBy) > 0:
			quota = waterFill(loads, countAll(needBy), ord)
		default:
			// Afterwards n_o + d_o = D, so sum(n+d) = 2D leaves no other
			// member overloaded: the loop ends.
			shiftQuota(o, excess, quota, loads, ord)
		}
	}
}

// countAll returns the number of partitions needing a backup.
func countAll(needBy [][]int) int {
	n := 0
	for _, ps := range needBy {
		n += len(ps)
	}
	return n
}

// shiftQuota moves excess of o's quota to the least loaded other members.
// It is the fallback when no surviving backup can be released to o, e.g.
// with two survivors whose loads are odd: balance then yields to the rule
// that a backup is never its partition's owner.
func shiftQuota(o, excess int, quota, loads []int, ord []int32) {
	quota[o] -= excess
	cur := make([]int, len(loads))
	for i := range cur {
		cur[i] = loads[i] + quota[i]
	}
	cur[o] = math.MaxInt / 2 // gets nothing
	for i, add := range waterFill(cur, excess, ord) {
		quota[i] += add
	}
}

// keptBackups returns the backups that stay (others -1), the survivors'
// backup loads, and per new owner the partitions needing a new backup.
func (m *Map) keptBackups(remap, owners []int32, n int) ([]int32, []int, [][]int) {
	backups := make([]int32, m.parts)
	loads := make([]int, n)
	needBy := make([][]int, n)
	for p := range backups {
		backups[p] = -1
		b := m.backupIdx(p)
		if b >= 0 && remap[b] >= 0 && remap[b] != owners[p] {
			backups[p] = remap[b]
			loads[remap[b]]++
		} else if n > 1 {
			needBy[owners[p]] = append(needBy[owners[p]], p)
		}
	}
	return backups, loads, needBy
}

// overloaded returns a member o whose partitions needing a backup plus its
// own quota exceed the total (n_o + d_o > D: the others cannot take all of
// its partitions), and by how much; excess 0 means none.
func overloaded(needBy [][]int, quota []int) (o, excess int) {
	total := countAll(needBy)
	for i, ps := range needBy {
		if e := len(ps) + quota[i] - total; e > excess {
			o, excess = i, e
		}
	}
	return o, excess
}

// release turns up to excess surviving backups of partitions that o neither owns
// nor backs up into partitions needing a backup; each one lowers o's
// overload by one, since o can then take it.
// It returns how many it released.
func release(o int32, excess int, owners, backups []int32, loads []int, needBy [][]int) int {
	done := 0
	for p, b := range backups {
		if done == excess {
			break
		}
		if b >= 0 && b != o && owners[p] != o {
			loads[b]--
			backups[p] = -1
			needBy[owners[p]] = append(needBy[owners[p]], p)
			done++
		}
	}
	return done
}

// assignBackups gives each partition in needBy[o] a backup other than o,
// using exactly quota[s] partitions for each member s. Each step serves the
// member with the largest n+d (partitions still needing a backup plus quota
// left); this keeps n_i + d_i <= D for all i (at most two members can be
// tight and a step always includes them), so it never gets stuck.
func assignBackups(needBy [][]int, quota []int, ord []int32, backups []int32) {
	for {
		a := argmax(needBy, quota, ord, -1, func(int32) bool { return true })
		if a < 0 {
			return
		}
		o, s := a, int32(-1)
		if len(needBy[a]) > 0 {
			s = argmax(needBy, quota, ord, a, func(i int32) bool { return quota[i] > 0 })
		} else {
			s, o = a, argmax(needBy, quota, ord, a, func(i int32) bool { return len(needBy[i]) > 0 })
		}
		backups[needBy[o][0]] = s
		needBy[o] = needBy[o][1:]
		quota[s]--
	}
}

// argmax returns the member other than skip, accepted by ok, with the
// largest positive n+d (ties: first in ord), or -1.
func argmax(needBy [][]int, quota []int, ord []int32, skip int32, ok func(int32) bool) int32 {
	best, bestV := int32(-1), 0
	for _, i := range ord {
		if v := len(needBy[i]) + quota[i]; i != skip && v > bestV && ok(i) {
			best, bestV = i, v
		}
	}
	return best
}

// waterFill returns how many of extra new items each member should get so
// the final loads are as even as possible without taking any away: members
// are filled up to a common level, and the remainder goes one each to the
// members at that level, first in ord order.
func waterFill(loads []int, extra int, ord []int32) []int {
	need := func(level int) int {
		n := 0
		for _, l := range loads {
			n += max(0, level-l)
		}
		return n
	}
	lo := slices.Min(loads)
	hi := lo + extra
	for lo < hi { // largest level with need(level) <= extra
		mid := lo + (hi-lo+1)/2
		if need(mid) <= extra {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	add := make([]int, len(loads))
	for i, l := range loads {
		add[i] = max(0, lo-l)
	}
	rem := extra - need(lo)
	for _, i := range ord {
		if rem > 0 && loads[i] <= lo {
			add[i]++
			rem--
		}
	}
	return add
}

// deal assigns each partition in ps to the next member in ord (cyclically)
// that has quota left, so consecutive moved partitions go to different
// members. The quotas must add up to len(ps).
func deal(ps []int, out []int32, quota []int, ord []int32) {
	active := slices.DeleteFunc(slices.Clone(ord), func(i int32) bool { return quota[i] == 0 })
	cur := 0
	for _, p := range ps {
		cur %= len(active)
		i := active[cur]
		out[p] = i
		quota[i]--
		if quota[i] == 0 {
			active = slices.Delete(active, cur, cur+1)
		} else {
			cur++
		}
	}
}
