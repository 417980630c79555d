package ownership

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestByAffinityRespectsBoundAndPrefersLocal checks the balance bound, that
// a partition whose bytes sit on one member with room goes there, that the
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
		for p := range parts {
			for range r.IntN(4) {
				aff = append(aff, Affinity{Partition: p, Member: members[r.IntN(n)], Bytes: r.Int64N(100)})
			}
		}
		m, err := ByAffinity("s", members, parts, aff)
		if err != nil {
			t.Fatal(err)
		}
		limit := (parts+n-1)/n + 1
		for _, name := range members {
			if got := len(m.Owned(name)); got > limit {
				t.Fatalf("case %d: %s owns %d > %d", c, name, got, limit)
			}
		}
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
