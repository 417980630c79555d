// Package shard holds the shard messages nodes send each other and their
// codec: the one vocabulary of the data path, shared by the send side
// (splitter) and the receive side, neither of which imports the other.
//
// A Msg carries, for one shuffle and epoch, Entries (the part of one input
// task attempt bound for the receiving node, split into Runs, one per output
// partition, in the order the payload holds them) and Ends (end-of-task
// markers saying how many entries an attempt sent to the receiver and their
// totals).
//
// # Wire form (the body of a wire.TypeShards frame)
//
//	shuffle string, epoch uvarint,
//	entries: count, then per entry task, attempt, seq (uvarints),
//	         runs: count, then per run partition, count (uvarints);
//	         data: length (uvarint), zero padding to a multiple of
//	         DataAlign bytes from the message's start, the bytes
//	ends:    count, then per end task, attempt, pieces, and totals
//	         pieces, rows, bytes, checksum (uvarints); row sums: count,
//	         then per sum the partition's delta from the previous one
//	         (uvarint; the first from 0, the others at least 1), rows
//	         (uvarint), sum (8 bytes little-endian)
//
// Decode checks every count against a limit before allocating and refuses
// trailing bytes; the decoded entries' Data alias the input (aligned, if the
// input is).
package shard
