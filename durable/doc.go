// Package durable makes written files survive a crash of the machine, in
// bulk: a job that writes a thousand output files commits each one by a
// rename, with its write-back started (StartWriteback), and makes them
// durable in batches while it writes the next ones (Syncer: every batch of
// files in the background, then the last few and each directory once at
// its end), instead of two syncs per file. On this project's machine the
// per-file syncs cost a 1000-partition set-index a fifth of its writing
// time and a 1000-chunk Zarr rechunk a fifth of its run; one sync of every
// file after the last (SyncFiles) left both cores idle for 0.1-0.4 s of a
// merge and 0.8-1.0 s of a rechunk.
package durable
