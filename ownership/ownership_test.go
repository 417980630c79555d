package ownership

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// names returns n member names.
func names(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("node-%02d", i)
	}
	return out
}

// mustNew is New for arguments known to be valid.
func mustNew(t testing.TB, seed string, members []string, p int) *Map {
	t.Helper()
	m, err := New(seed, members, p)
	if err != nil {
		t.Fatalf("New(%q, %d members, %d): %v", seed, len(members), p, err)
	}
	return m
}

func TestNewErrors(t *testing.T) {
	cases := []struct {
		name       string
		members    []string
		partitions int
		want       error
	}{
		{"no members", nil, 4, ErrNoMembers},
		{"empty member", []string{"a", ""}, 4, ErrEmptyMember},
		{"duplicate", []string{"b", "a", "b"}, 4, ErrDuplicateMember},
		{"negative partitions", []string{"a"}, -1, ErrPartitions},
		{"zero partitions", []string{"a", "b"}, 0, nil},
		{"one member", []string{"a"}, 7, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New("s", tc.members, tc.partitions)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("New: err %v, want %v", err, tc.want)
			}
		})
	}
}

func TestWithoutErrors(t *testing.T) {
	m := mustNew(t, "s", []string{"a", "b", "c"}, 10)
	cases := []struct {
		name string
		lost []string
		want error
	}{
		{"nothing", nil, ErrNothingLost},
		{"unknown", []string{"a", "zz"}, ErrUnknownMember},
		{"all", []string{"c", "a", "b"}, ErrNoMembers},
		{"one", []string{"b"}, nil},
		{"repeated name", []string{"b", "b"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := m.Without(tc.lost...)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("Without: err %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := m.Without("a"); err != nil {
		t.Fatal(err)
	}
	if got := m.Members(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("Without changed its receiver: members %v", got)
	}
}

func TestOutOfRange(t *testing.T) {
	m := mustNew(t, "s", []string{"a", "b"}, 3)
	for _, p := range []int{-1, 3, 1 << 40} {
		if m.Owner(p) != "" || m.OwnerIndex(p) != -1 || m.Backup(p) != "" {
			t.Errorf("partition %d: owner %q index %d backup %q, want empty", p, m.Owner(p), m.OwnerIndex(p), m.Backup(p))
		}
	}
	if got := m.Owned("nobody"); got != nil {
		t.Errorf("Owned(nobody) = %v", got)
	}
	single := mustNew(t, "s", []string{"a"}, 3)
	if single.Backup(0) != "" {
		t.Errorf("single member map has backup %q", single.Backup(0))
	}
}

// TestGolden pins the assignment: every node of a cluster must compute the
// same map, including nodes built from other versions of this code, so a
// change here is a protocol change.
func TestGolden(t *testing.T) {
	m := mustNew(t, "shuffle-golden", []string{"e", "c", "a", "d", "b"}, 12)
	gotO, gotB := "", ""
	for p := range m.Partitions() {
		gotO += m.Owner(p)
		gotB += m.Backup(p)
	}
	next, err := m.Without("c")
	if err != nil {
		t.Fatal(err)
	}
	gotO2, gotB2 := "", ""
	for p := range next.Partitions() {
		gotO2 += next.Owner(p)
		gotB2 += next.Backup(p)
	}
	want := [4]string{goldenOwners, goldenBackups, goldenOwners2, goldenBackups2}
	if got := [4]string{gotO, gotB, gotO2, gotB2}; got != want {
		t.Fatalf("assignment changed:\n got %q\nwant %q", got, want)
	}
}

const (
	goldenOwners   = "cabdecabdeca"
	goldenBackups  = "abdecbdecade"
	goldenOwners2  = "eabdebabdeda"
	goldenBackups2 = "abdebddebaae"
)

// counts returns how many partitions each member owns and backs up,
// computed from Owner and Backup one partition at a time.
func counts(m *Map) (owners, backups map[string]int) {
	owners, backups = map[string]int{}, map[string]int{}
	for _, name := range m.Members() {
		owners[name], backups[name] = 0, 0
	}
	for p := range m.Partitions() {
		owners[m.Owner(p)]++
		if b := m.Backup(p); b != "" {
			backups[b]++
		}
	}
	return owners, backups
}

// spread returns max-min of the values.
func spread(c map[string]int) int {
	lo, hi := -1, 0
	for _, v := range c {
		if lo < 0 || v < lo {
			lo = v
		}
		hi = max(hi, v)
	}
	return hi - max(lo, 0)
}

// checkMap checks the invariants every map has, against brute force.
func checkMap(t *testing.T, m *Map) {
	t.Helper()
	members := m.Members()
	owners, backups := counts(m)
	n, p := len(members), m.Partitions()
	for _, name := range members {
		if c := owners[name]; c != p/n && c != (p+n-1)/n {
			t.Fatalf("epoch %d: %s owns %d of %d partitions over %d members", m.Epoch(), name, c, p, n)
		}
		var want []int
		for q := range p {
			if m.Owner(q) == name {
				want = append(want, q)
			}
		}
		if got := m.Owned(name); !slices.Equal(got, want) {
			t.Fatalf("epoch %d: Owned(%s) = %v, want %v", m.Epoch(), name, got, want)
		}
	}
	if n > 1 && p > 0 && spread(backups) > 1 {
		t.Fatalf("epoch %d: backup loads %v not within one", m.Epoch(), backups)
	}
	for q := range p {
		if members[m.OwnerIndex(q)] != m.Owner(q) {
			t.Fatalf("OwnerIndex(%d) = %d, not %s", q, m.OwnerIndex(q), m.Owner(q))
		}
		if b := m.Backup(q); (n > 1) != (b != "") || b == m.Owner(q) {
			t.Fatalf("epoch %d partition %d: backup %q, owner %q, %d members", m.Epoch(), q, b, m.Owner(q), n)
		}
	}
}

func TestNewProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for it := range 300 {
		n, p := 1+r.IntN(20), r.IntN(5001)
		seed := fmt.Sprintf("shuffle-%d", it)
		members := names(n)
		m := mustNew(t, seed, members, p)
		checkMap(t, m)
		r.Shuffle(n, func(i, j int) { members[i], members[j] = members[j], members[i] })
		again := mustNew(t, seed, members, p)
		for q := range p {
			if m.Owner(q) != again.Owner(q) || m.Backup(q) != again.Backup(q) {
				t.Fatalf("seed %s: partition %d differs with another member order", seed, q)
			}
			if n > 1 && q > 0 && m.Owner(q) == m.Owner(q-1) {
				t.Fatalf("seed %s: adjacent partitions %d and %d share owner %s", seed, q-1, q, m.Owner(q))
			}
		}
		checkBackupSpread(t, m)
	}
}

// checkBackupSpread checks that each member's partitions have their backups
// spread within one over all other members (New's guarantee).
func checkBackupSpread(t *testing.T, m *Map) {
	t.Helper()
	members := m.Members()
	if len(members) < 2 {
		return
	}
	for _, owner := range members {
		c := map[string]int{}
		for _, other := range members {
			if other != owner {
				c[other] = 0
			}
		}
		for _, q := range m.Owned(owner) {
			c[m.Backup(q)]++
		}
		if spread(c) > 1 {
			t.Fatalf("backups of %s's partitions are uneven: %v", owner, c)
		}
	}
}

func TestSeedChangesAssignment(t *testing.T) {
	a := mustNew(t, "shuffle-a", names(8), 64)
	b := mustNew(t, "shuffle-b", names(8), 64)
	if len(b.Moved(a)) == 0 {
		t.Fatal("two seeds gave the same assignment")
	}
	if c := mustNew(t, "shuffle-a", names(8), 64); len(c.Moved(a)) != 0 {
		t.Fatal("the same seed gave two assignments")
	}
}

func TestWithoutProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for it := range 200 {
		n, p := 2+r.IntN(19), r.IntN(5001)
		m := mustNew(t, fmt.Sprintf("shuffle-%d", it), names(n), p)
		for len(m.Members()) > 1 {
			members := m.Members()
			r.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
			lost := members[:1+r.IntN(min(3, len(members)-1))]
			next := checkWithout(t, m, lost)
			checkLostOrder(t, m, next, lost)
			m = next
		}
	}
}

// checkWithout applies Without and checks it against brute force.
func checkWithout(t *testing.T, m *Map, lost []string) *Map {
	t.Helper()
	next, err := m.Without(lost...)
	if err != nil {
		t.Fatalf("Without(%v): %v", lost, err)
	}
	if next.Epoch() != m.Epoch()+1 {
		t.Fatalf("epoch %d after %d", next.Epoch(), m.Epoch())
	}
	checkMap(t, next)
	var moved []int
	toBackup := 0
	for q := range m.Partitions() {
		if next.Owner(q) == m.Owner(q) {
			continue
		}
		if !slices.Contains(lost, m.Owner(q)) {
			t.Fatalf("partition %d moved from surviving %s to %s", q, m.Owner(q), next.Owner(q))
		}
		moved = append(moved, q)
		if next.Owner(q) == m.Backup(q) {
			toBackup++
		}
	}
	if got := next.Moved(m); !slices.Equal(got, moved) {
		t.Fatalf("Moved = %v, want %v", got, moved)
	}
	if m.Epoch() == 0 && len(lost) == 1 {
		checkFirstLoss(t, m, next, len(moved), toBackup)
	}
	return next
}

// checkFirstLoss checks the promises for one member lost from a New map:
// its partitions go to their backups but for rounding, and every surviving
// backup that is not the new owner stays.
func checkFirstLoss(t *testing.T, m, next *Map, moved, toBackup int) {
	t.Helper()
	if slack := 2 * len(next.Members()); toBackup < moved-slack {
		t.Fatalf("only %d of %d moved partitions went to their backup", toBackup, moved)
	}
	for q := range m.Partitions() {
		b := m.Backup(q)
		if slices.Contains(next.Members(), b) && b != next.Owner(q) && next.Backup(q) != b {
			t.Fatalf("partition %d: surviving backup %s replaced by %s", q, b, next.Backup(q))
		}
	}
}

// checkLostOrder checks that the order and repetition of lost names do not
// matter.
func checkLostOrder(t *testing.T, m, next *Map, lost []string) {
	t.Helper()
	other := append(slices.Clone(lost), lost[0])
	slices.Reverse(other)
	again, err := m.Without(other...)
	if err != nil {
		t.Fatal(err)
	}
	for q := range m.Partitions() {
		if next.Owner(q) != again.Owner(q) || next.Backup(q) != again.Backup(q) {
			t.Fatalf("partition %d depends on the order of %v", q, lost)
		}
	}
}

func TestMovedDifferentSizes(t *testing.T) {
	a := mustNew(t, "s", names(3), 5)
	b := mustNew(t, "s", names(3), 8)
	if got, want := b.Moved(a), []int{5, 6, 7}; !slices.Equal(got, want) {
		t.Fatalf("Moved = %v, want %v", got, want)
	}
}

func ExampleMap_Without() {
	m, _ := New("shuffle-42", []string{"node-a", "node-b", "node-c"}, 6)
	next, _ := m.Without("node-b")
	fmt.Println(m.Owned("node-b"), next.Moved(m), next.Epoch())
	for _, p := range next.Moved(m) {
		fmt.Println(p, next.Owner(p))
	}
	// Output:
	// [2 5] [2 5] 1
	// 2 node-a
	// 5 node-c
}

func BenchmarkNew(b *testing.B) {
	members := names(16)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := New("shuffle", members, 1_000_000); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOwner(b *testing.B) {
	m := mustNew(b, "shuffle", names(16), 1_000_000)
	b.ReportAllocs()
	p := 0
	for b.Loop() {
		_ = m.Owner(p)
		p = (p + 7919) % 1_000_000
	}
}

func BenchmarkWithout(b *testing.B) {
	m := mustNew(b, "shuffle", names(16), 1_000_000)
	b.ReportAllocs()
	var next *Map
	for b.Loop() {
		var err error
		if next, err = m.Without("node-03"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(next.Moved(m))), "moved/op")
}
