// Package job holds shufflenode's jobs: everything that drives a cluster
// through the client API to do a piece of work and reports what it
// measured. The binary's commands (demo, shuffle, merge, set-index,
// rechunk, gen-parquet, gen-zarr, bench) only turn flags into these
// configs and print the reports.
//
// Every job runs on a Cluster opened by OpenCluster: an in-process cluster
// of ClusterConfig.Nodes nodes on 127.0.0.1, or the running cluster whose
// member ClusterConfig.Addr names. Meter and Usage measure a run (wall
// time, CPU time, peak RSS), ProcUsage another process.
//
// The jobs:
//   - the dataframe demo (RunDemo, RunDemoOn): a synthetic table, hash or
//     range partitioned, verified row by row by an independent Verifier;
//   - the array demo (RunArrayDemo, RunArrayDemoOn): a synthetic n-d array
//     rechunked and verified element by element;
//   - Parquet shuffle (PlanShuffle), merge (PlanMerge, a co-partitioned
//     hash join run on the nodes) and set-index (PlanSetIndex, a sampled
//     range partitioning sorted on the nodes);
//   - Zarr v2 rechunk (PlanRechunk);
//   - generators of synthetic inputs (GenParquet, GenZarr);
//   - the benchmark of record (Bench): the machine's ceilings (Ceilings: a
//     Go copy, one libp2p TLS stream via dht.StreamCeiling, one Flight
//     DoPut stream), then each job's put+barrier and read seconds, MB/s,
//     CPU seconds, peak RSS and its rate over the slowest network ceiling,
//     on an in-process cluster or on serve processes it starts
//     (StartProcs), and after the jobs what memory touched for the first
//     time costs (FirstTouchCeilings); and the demo case tables
//     BenchShuffle and BenchRecovery.
//
// A plan's Run blocks until the job is done or its context ends; it opens
// and closes its own cluster. The integration tests drive RunDemo and
// RunArrayDemo on clusters they start themselves.
package job
