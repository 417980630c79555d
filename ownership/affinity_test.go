package ownership

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestByAffinityRespectsBoundAndPrefersLocal checks the balance bound, that
// a partition goes to a member with more of its bytes than its owner only
// if that member is past the bound, that the
// result does not depend on the member order, and that a loss moves only
// the lost member's partitions.
func TestByAffinityRespectsBoundAndPrefersLocal(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 4))
	for c := range 200 {
		n, parts := 1+r.IntN(6), r.IntN(60)
		members := make([]string, n)
		for i := range members {
			members[i] = fmt.Sprintf("n%d", i)
		}
		var aff []Affinity
		heavy := r.IntN(2) == 0 // partitions of very uneven sizes
		for p := range parts {
			for range r.IntN(4) {
				b := r.Int64N(100)
				if heavy && r.IntN(8) == 0 {
					b *= 1000
				}
				aff = append(aff, Affinity{Partition: p, Member: members[r.IntN(n)], Bytes: b})
			}
		}
		m, err := ByAffinity("s", members, parts, aff)
		if err != nil {
			t.Fatal(err)
		}
		checkBound(t, c, m, members, parts, aff)
		checkRefusedOnlyWhenFull(t, c, m, members, parts, aff)
		shuffled := slices.Clone(members)
		r.Shuffle(n, func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		again, _ := ByAffinity("s", shuffled, parts, aff)
		for p := range parts {
			if m.Owner(p) != again.Owner(p) || m.Backup(p) != again.Backup(p) {
				t.Fatalf("case %d: partition %d depends on the member order", c, p)
			}
			if n > 1 && m.Backup(p) == m.Owner(p) {
				t.Fatalf("case %d: partition %d backed up on its owner", c, p)
			}
		}
		if n > 1 {
			lost := members[r.IntN(n)]
			next, err := m.Without(lost)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range next.Moved(m) {
				if m.Owner(p) != lost {
					t.Fatalf("case %d: partition %d of %s moved on losing %s", c, p, m.Owner(p), lost)
				}
			}
		}
	}
}

func TestByAffinityTakesTheHeaviest(t *testing.T) {
	aff := []Affinity{{0, "b", 10}, {0, "a", 5}, {1, "a", 7}, {1, "a", 7}, {1, "b", 9}, {2, "c", 1}}
	m, err := ByAffinity("s", []string{"a", "b", "c"}, 4, aff)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range []string{"b", "a", "c"} {
		if got := m.Owner(p); got != want {
			t.Fatalf("partition %d owned by %s, want %s", p, got, want)
		}
	}
}

// ownedBytes returns, per member, how many partitions it owns and their
// bytes (the sum of each partition's affinities), and each partition's
// bytes: a brute-force recount of what ByAffinity balances.
func ownedBytes(m *Map, members []string, parts int, aff []Affinity) (count map[string]int, owned map[string]int64, size []int64, total int64) {
	count, owned, size = map[string]int{}, map[string]int64{}, make([]int64, parts)
	for _, a := range aff {
		size[a.Partition] += a.Bytes
		total += a.Bytes
	}
	for p := range parts {
		count[m.Owner(p)]++
		owned[m.Owner(p)] += size[p]
	}
	return count, owned, size, total
}

// checkBound fails t unless every member owns at most ceil(P/N)+1
// partitions or at most 1.1/N of the bytes.
func checkBound(t *testing.T, c int, m *Map, members []string, parts int, aff []Affinity) {
	t.Helper()
	n := len(members)
	limit := (parts+n-1)/n + 1
	count, owned, _, total := ownedBytes(m, members, parts, aff)
	for _, name := range members {
		if count[name] > limit && float64(owned[name]) > 1.1*float64(total)/float64(n) {
			t.Fatalf("case %d: %s owns %d > %d partitions and %d of %d bytes", c, name, count[name], limit, owned[name], total)
		}
	}
}

// checkRefusedOnlyWhenFull fails t if a partition's owner holds fewer of
// its bytes than another member that could still take it at the end (a
// member past the bound stays past it, since its load only grows).
func checkRefusedOnlyWhenFull(t *testing.T, c int, m *Map, members []string, parts int, aff []Affinity) {
	t.Helper()
	n := len(members)
	limit := (parts+n-1)/n + 1
	count, owned, size, total := ownedBytes(m, members, parts, aff)
	held := map[[2]string]int64{}
	for _, a := range aff {
		held[[2]string{fmt.Sprint(a.Partition), a.Member}] += a.Bytes
	}
	for p := range parts {
		mine := held[[2]string{fmt.Sprint(p), m.Owner(p)}]
		for _, name := range members {
			roomy := count[name] < limit || float64(owned[name]+size[p]) <= 1.1*float64(total)/float64(n)
			if held[[2]string{fmt.Sprint(p), name}] > mine && roomy {
				t.Fatalf("case %d: partition %d went to %s (%d bytes), %s holds more and has room", c, p, m.Owner(p), mine, name)
			}
		}
	}
}

// TestByAffinityByteShare: one member holds many small partitions, another
// a few large ones. The count bound alone would move small partitions away;
// the byte share lets them stay, since they add up to little.
func TestByAffinityByteShare(t *testing.T) {
	var aff []Affinity
	for p := range 12 {
		aff = append(aff, Affinity{Partition: p, Member: "a", Bytes: 1})
	}
	for p := 12; p < 16; p++ {
		aff = append(aff, Affinity{Partition: p, Member: "b", Bytes: 1000})
	}
	m, err := ByAffinity("s", []string{"a", "b"}, 16, aff)
	if err != nil {
		t.Fatal(err)
	}
	for p := range 16 {
		if want := map[bool]string{true: "a", false: "b"}[p < 12]; m.Owner(p) != want {
			t.Errorf("partition %d owned by %s, want %s (where its bytes are)", p, m.Owner(p), want)
		}
	}
	if got := len(m.Owned("a")); got != 12 {
		t.Errorf("a owns %d partitions, want 12 (past ceil(16/2)+1 = 9, within its byte share)", got)
	}
}
