// Package dfops holds the dataframe operations that run on the output
// partitions of a shuffle: a hash join (pandas merge), a stable sort by one
// column (the per-partition half of set_index) and the choice of range
// divisions from a sample. It works on Arrow records in memory and is pure:
// no network, no storage, no goroutines, no global state.
//
// # Join
//
// HashJoin and HashJoinBatches join two records on key columns with the
// semantics of pandas.merge, except for missing keys:
//
//   - How is Inner, Left, Right or Outer.
//   - Missing keys never match: a row whose key has a null (or a float NaN) in
//     any key column matches no row, as in SQL (pandas would match NaN with
//     NaN). Left, Right and Outer joins still keep such rows, with nulls on
//     the other side.
//   - A key pair with the same name on both sides (pandas "on=") appears once
//     in the output, at the left column's position; it holds the left key,
//     or the right key on rows that only the right side has. Key pairs with
//     different names (left_on/right_on) keep both columns.
//   - Every other column name found on both sides gets the suffixes, "_x" for
//     the left and "_y" for the right by default. Suffixes that produce a
//     duplicate column name are refused.
//   - Output columns: the left record's columns in order, then the right
//     record's (without the same-named keys).
//   - Output row order: for Inner, Left and Outer, left rows in their order,
//     each followed by its matches in right order (an unmatched left row, kept
//     by Left and Outer, appears once in its place with nulls on the right);
//     then, for Outer, the right rows that matched nothing, in right order.
//     Right is the mirror image: right rows in their order, each with its
//     left matches in left order. This is pandas' order for Left and Right and
//     for Inner; pandas sorts the keys of an outer join, this package does not.
//
// Key columns of different but compatible types are cast to a common type
// before they are compared (see CommonKeyType): integers to int64 (uint64 if
// both are unsigned), floats and integer-float pairs to float64, string and
// large_string to string, binary and large_binary to binary, date32 and
// date64 to date64, timestamps of one zone to the finer unit. Other pairs
// (string and int64, for example) are refused with ErrKeyType naming both
// columns and types. Integers beyond 2^53 compared with floats lose
// precision, as they do in pandas.
//
// The hash table is built on the side with fewer rows and probed with the
// other; the output order does not depend on which side that is.
//
// StreamJoin is the same join with the lead side (the left; the right for
// Right) taken record by record: the other side's hash table is built once,
// each lead record is joined as it comes, and the rows come out in the same
// order as HashJoin's on the concatenated lead side. Only the build side is
// ever whole in memory: the nodes join a partition this way as they read it.
//
// # Sort and divisions
//
// SortStable orders a record by one column, keeping the input order of
// equal keys; nulls and float NaNs go last, in input order. Integer, date,
// timestamp, bool and float keys are radix sorted as order-preserving
// 64-bit words (only the digits in which the keys differ), strings and
// short columns by comparison. Quantiles picks
// n-1 ascending divisions from a weighted sample (the approximate quantiles
// Dask's set_index uses), and Sample collects one from the columns of many
// files and encodes the divisions as the JSON values of a range partitioning
// rule (package table). When one value holds more than 1/n of the rows,
// neighbouring divisions are equal and the partitions between them stay
// empty: the partition count asked for is kept (Dask would drop the
// duplicates and make fewer partitions). All rows of one value always land
// in one partition, which is then simply large.
//
// # Caller's duties
//
// Records returned by HashJoin, SortStable and CastRecord are owned by the
// caller, who must Release them; inputs are never retained past the call.
// Records handed to HashJoinBatches' callback are released when it returns:
// Retain what you keep.
//
// # Concurrency
//
// Everything here is a function of its arguments (a Sample is not safe for
// concurrent use); joins of different partitions can run in parallel.
package dfops
