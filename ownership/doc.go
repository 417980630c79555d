// Package ownership decides which member owns each output partition of a
// shuffle, and which member holds its backup copy (replication 2). It is a
// pure, deterministic function of its inputs: every node computes the same
// map from the same seed, member list and partition count, with no network
// round trip. It imports no network or storage packages.
//
// # The assignment (epoch 0, New)
//
// Members are sorted, then put in a seed-derived random order (SplitMix64
// seeded with FNV-1a of the seed, Fisher-Yates; both written out here so
// that the result never depends on the Go version). Partitions are dealt
// round-robin in that order: partition p goes to the member at position
// p mod N. So every member owns floor(P/N) or ceil(P/N) partitions,
// adjacent partitions have different owners (N > 1), and the result does
// not depend on the order of the member list. The backup of p is the
// member 1 + (p/N mod (N-1)) positions further on: never the owner, backup
// loads within one of each other, and the backups of one member's
// partitions spread within one over all the other members, so if it is
// lost its load can go to its backups evenly.
//
// This assignment is part of the protocol (nodes of different versions must
// agree): TestGolden pins it.
//
// # By affinity (ByAffinity)
//
// When the bytes of each partition's input are known per member (an array
// whose old chunks are put from known nodes), ByAffinity gives each
// partition to the member holding most of them, greedily in decreasing
// bytes, under a balance bound: a member takes a partition while it owns
// fewer than ceil(P/N)+1, or while its share of the bytes stays within 10%
// of even (1.1/N), so many small partitions may stay where their bytes
// are; leftovers go to
// the least loaded member, backups spread as in New. It is deterministic
// from its arguments, and Without treats its maps like any other.
//
// # After a loss (Without)
//
// Without returns the map of the next epoch. Guarantees:
//
//   - Only the lost members' partitions change owner.
//   - Owner loads are water-filled: the survivors' loads end within one of
//     each other if they were before (always, for maps built by New and
//     Without). Each moved partition goes to its old backup when that
//     survivor still has room under the balanced targets, otherwise it is
//     dealt round-robin in a seed-and-epoch-derived order. After one loss
//     from a New map, all but at most 2(N-1) of the moved partitions go to
//     their backup.
//   - With two or more survivors every partition has a backup other than
//     its owner. A surviving backup stays unless it became the owner, or
//     (rarely, after several losses) one member owns so many partitions in
//     need of a backup that balance requires moving a few surviving backups
//     to it. After one loss from a New map no surviving backup moves.
//     Backup loads stay within one of each other (checked by property tests
//     over random sequences of losses).
//   - The result depends on m and the set of lost names only (not their
//     order or repetition). Successive losses must be applied in the same
//     order on every node (the coordinator's epoch history): losing a and
//     then b can differ from losing both at once.
//
// # Cost
//
// New takes O(N log N) time and O(N) memory: the epoch-0 owner and backup of
// a partition are computed on demand. Without materialises per-partition
// owners and backups (8 bytes per partition) in O(P + N log N) time, plus
// O(N) per partition that needs a new backup.
//
// # Concurrency
//
// A Map is immutable: all methods are safe for concurrent use.
package ownership
