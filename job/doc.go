// Package job runs shufflenode's built-in jobs against a cluster and checks
// them: the dataframe demo (synthetic table, hash or range partitioning,
// verified row by row by an independent Verifier). The demo command, the
// bench command and the integration tests all drive it.
package job
