// Command shufflenode runs and drives shufflenode, the peer-to-peer shuffle
// and rechunk service: it reads flags, the environment and config files,
// turns them into node.Config (serve) or a job's config (package job), and
// dispatches; the jobs themselves live in package job.
//
// Subcommands: demo (the main job: an in-process cluster shuffles a
// synthetic table, or with --array rechunks a synthetic array, and verifies
// the result), bench (the benchmark of record: this machine's ceilings,
// then each job's time, MB/s, CPU, peak RSS and ratio to its ceiling;
// --jobs, --quick SCALE, --processes N or --cluster for serve processes;
// bench shuffle, bench recovery and bench scale run the demo's case tables), serve (one node, until SIGINT or
// SIGTERM), status, layout, plan rechunk, and the jobs shuffle (Parquet),
// merge, set-index, rechunk (Zarr v2), redistribute (DAP arrays as .npy +
// dim_data), gen-parquet, gen-zarr and gen-dap. Jobs run on
// an in-process cluster unless --cluster names a member of a running one.
// docs/cli.md documents every command and flag.
//
// Every job command shares one preamble (runJob): a context that SIGINT
// ends, the peak RSS reset, the run, then the report on stdout or the error
// on one line of stderr with exit status 2 for bad input and 1 otherwise.
package main
