// Package parquetio reads the Parquet input files of a dataframe shuffle and
// writes its output partitions as Parquet files: a file is read into Arrow
// record batches, and record batches are written into a file. Files of
// flat columns of int32, int64, float, double, string and binary (plain,
// delta or dictionary-encoded, snappy or uncompressed) are encoded and
// decoded here, page by page (flatwrite.go, flatdict.go, fastread.go,
// deltadec.go), and their footers built and read by Arrow's metadata
// package; every other file, and every other column of a file read, goes
// through Arrow's pqarrow.
//
// Glob lists the input files of a pattern; CheckInputs checks that they all
// have one schema whose every column the shuffle can route and move (see
// package table); ReadFile reads one file (one input task) into records.
// Create opens an output file for streaming writes; Writer.Commit makes it
// appear at its path atomically (temporary file, fsync, rename), and
// WriteFile does all of that for a list of records. Output columns are
// compressed with snappy only where it pays (Auto, the default: decided per
// column from a sample of the first record written), or all alike.
//
// # Caller's duties
//
// Records returned by ReadFile are owned by the caller, who must Release
// them. Records handed to Writer.Write and WriteFile are not retained. A
// Writer must end with Commit or Abort (Abort after Commit does nothing), or
// its temporary file stays behind.
//
// # Concurrency
//
// The functions are safe for concurrent use on different files. A Writer is
// not safe for concurrent use.
package parquetio
