package recovery

import (
	"cmp"
	"encoding/binary"
	"hash/fnv"
	"slices"
)

// Who coordinates a shuffle is a function of its lost list, so every member
// agrees without talking: the candidates are the node that took the create,
// then the other pinned members in an order drawn from the shuffle ID; the
// coordinator of an epoch is the first candidate not lost, and its term is
// its place in the list. Members are only ever added to the lost list, so
// the term only grows, and one term has exactly one coordinator.

// Candidates orders the pinned members of shuffle id for the coordinator
// role: creator first, the others by a hash of (shuffle ID, member), ties
// by name. members is not modified.
func Candidates(id, creator string, members []string) []string {
	rest := slices.DeleteFunc(slices.Clone(members), func(m string) bool { return m == creator })
	slices.SortFunc(rest, func(a, b string) int {
		ha, hb := candidateHash(id, a), candidateHash(id, b)
		return cmp.Or(cmp.Compare(ha, hb), cmp.Compare(a, b))
	})
	return append([]string{creator}, rest...)
}

// candidateHash is FNV-1a of the shuffle ID and the member, length-prefixed.
func candidateHash(id, member string) uint64 {
	h := fnv.New64a()
	var n [8]byte
	for _, s := range []string{id, member} {
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	return h.Sum64()
}

// FirstLive returns the coordinator of the epoch where lost are gone: the
// first of cands not in lost, and its index (the term). ok is false when
// every candidate is lost.
func FirstLive(cands, lost []string) (node string, term uint64, ok bool) {
	for i, c := range cands {
		if !slices.Contains(lost, c) {
			return c, uint64(i), true
		}
	}
	return "", 0, false
}

// Successor returns who coordinates once the members of live seen down join
// lost: the first candidate in neither, and the lost list of that epoch
// (lost, then the members of live seen down in candidate order). ok is false
// when every candidate is down.
func Successor(cands, live, lost []string, down func(string) bool) (node string, next []string, ok bool) {
	next = slices.Clone(lost)
	for _, c := range cands {
		if down(c) && slices.Contains(live, c) {
			next = append(next, c)
		}
	}
	node, _, ok = FirstLive(cands, next)
	return node, next, ok
}
