// Package job holds shufflenode's jobs: everything that drives a cluster
// through the client API to do a piece of work and reports what it
// measured. The binary's commands (demo, shuffle, merge, set-index,
// rechunk, redistribute) only turn flags into these configs and print the
// reports. The benchmark of record that runs these jobs is package bench;
// the synthetic inputs are package synth.
//
// Every job runs on a Cluster opened by OpenCluster: an in-process cluster
// of ClusterConfig.Nodes nodes on 127.0.0.1, or the running cluster whose
// member ClusterConfig.Addr names. Reports give the process's peak RSS
// (package measure).
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
//   - DAP redistribution of .npy + dim_data files (PlanRedistribute).
//
// A plan's Run blocks until the job is done or its context ends; it opens
// and closes its own cluster. The integration tests drive RunDemo and
// RunArrayDemo on clusters they start themselves.
package job
