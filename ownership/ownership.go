package ownership

import (
	"fmt"
	"slices"
)

// Map assigns every output partition of a shuffle to an owner and a backup
// member. It is immutable and safe for concurrent use.
type Map struct {
	seed    string
	members []string // sorted
	parts   int
	epoch   int
	// order is the epoch-0 deal order (member indexes); owners and backups
	// are nil at epoch 0 and computed from it.
	order []int32
	// owners and backups hold member indexes per partition from epoch 1 on;
	// a backup is -1 when there is a single member.
	owners  []int32
	backups []int32
}

// New returns the epoch-0 map of partitions output partitions over members
// (unique, non-empty node names in any order). seed is normally the shuffle
// ID; shuffles that must be co-partitioned pass the same seed (and the same
// members and partition count). It takes O(N log N) time and O(N) memory.
func New(seed string, members []string, partitions int) (*Map, error) {
	if partitions < 0 {
		return nil, fmt.Errorf("%w: %d", ErrPartitions, partitions)
	}
	sorted, err := sortMembers(members)
	if err != nil {
		return nil, err
	}
	order := newRNG(seed, 0).permutation(len(sorted))
	return &Map{seed: seed, members: sorted, parts: partitions, order: order}, nil
}

// sortMembers returns a sorted copy of members after checking them.
func sortMembers(members []string) ([]string, error) {
	if len(members) == 0 {
		return nil, ErrNoMembers
	}
	sorted := slices.Clone(members)
	slices.Sort(sorted)
	for i, name := range sorted {
		if name == "" {
			return nil, ErrEmptyMember
		}
		if i > 0 && sorted[i-1] == name {
			return nil, fmt.Errorf("%w: %q", ErrDuplicateMember, name)
		}
	}
	return sorted, nil
}

// ownerIdx returns the member index owning p, which must be in range.
func (m *Map) ownerIdx(p int) int32 {
	if m.owners != nil {
		return m.owners[p]
	}
	return m.order[p%len(m.order)]
}

// backupIdx returns the member index holding p's backup, or -1.
func (m *Map) backupIdx(p int) int32 {
	if m.backups != nil {
		return m.backups[p]
	}
	n := len(m.order)
	if n == 1 {
		return -1
	}
	// Round r of the deal shifts the backup by 1 + r mod (n-1) positions, so
	// one owner's backups cycle over all other members.
	k, r := p%n, p/n
	return m.order[(k+1+r%(n-1))%n]
}

// inRange reports whether p is a partition of m.
func (m *Map) inRange(p int) bool { return p >= 0 && p < m.parts }

// Owner returns the owner of partition p, or "" if p is out of range.
func (m *Map) Owner(p int) string {
	if !m.inRange(p) {
		return ""
	}
	return m.members[m.ownerIdx(p)]
}

// OwnerIndex returns the index in Members() of the owner of partition p, or
// -1 if p is out of range.
func (m *Map) OwnerIndex(p int) int {
	if !m.inRange(p) {
		return -1
	}
	return int(m.ownerIdx(p))
}

// Backup returns the backup member of partition p: a member other than
// Owner(p), or "" when the map has one member or p is out of range.
func (m *Map) Backup(p int) string {
	if !m.inRange(p) {
		return ""
	}
	if b := m.backupIdx(p); b >= 0 {
		return m.members[b]
	}
	return ""
}

// Members returns a sorted copy of the map's members.
func (m *Map) Members() []string { return slices.Clone(m.members) }

// Partitions returns the number of output partitions.
func (m *Map) Partitions() int { return m.parts }

// Epoch returns 0 for a map from New and one more for each Without.
func (m *Map) Epoch() int { return m.epoch }

// Seed returns the seed the map was built from.
func (m *Map) Seed() string { return m.seed }

// memberIdx returns the index of name in m.members, or -1.
func (m *Map) memberIdx(name string) int {
	if i, ok := slices.BinarySearch(m.members, name); ok {
		return i
	}
	return -1
}

// Owned returns the partitions member owns, ascending (nil for a non-member
// or a member that owns none).
func (m *Map) Owned(member string) []int {
	idx := m.memberIdx(member)
	if idx < 0 {
		return nil
	}
	var out []int
	if m.owners == nil {
		n := len(m.order)
		for p := slices.Index(m.order, int32(idx)); p < m.parts; p += n {
			out = append(out, p)
		}
		return out
	}
	for p, o := range m.owners {
		if int(o) == idx {
			out = append(out, p)
		}
	}
	return out
}

// Moved returns, ascending, the partitions whose owner in m differs (by
// name) from their owner in from. If the maps have different partition
// counts, partitions present in only one of them count as moved. It takes
// O(P + N log N) time.
func (m *Map) Moved(from *Map) []int {
	remap := make([]int32, len(from.members))
	for i, name := range from.members {
		remap[i] = int32(m.memberIdx(name))
	}
	var out []int
	common := min(m.parts, from.parts)
	for p := range common {
		if remap[from.ownerIdx(p)] != m.ownerIdx(p) {
			out = append(out, p)
		}
	}
	for p := common; p < max(m.parts, from.parts); p++ {
		out = append(out, p)
	}
	return out
}
