// Command shufflenode runs and drives shufflenode, the peer-to-peer shuffle
// and rechunk service.
//
// Subcommands: demo (the main job: an in-process cluster shuffles a
// synthetic table, or with --array rechunks a synthetic array, and verifies
// the result), bench (shuffle, recovery), serve (one node, until SIGINT or
// SIGTERM), status, layout, plan rechunk, and the jobs shuffle (Parquet),
// merge, set-index, rechunk (Zarr v2), gen-parquet and gen-zarr. Jobs run on
// an in-process cluster unless --cluster names a member of a running one.
// README.md documents every flag.
//
// Only this package reads flags, the environment and config files; it turns
// them into node.Config and the job packages' configs.
package main
