// Package bench is the benchmark of record behind `shufflenode bench`: it
// measures the machine's ceilings, runs shufflenode's jobs (package job)
// and prints each job's time, rate, CPU, faults and peak RSS beside them.
//
// Bench runs, in order:
//   - the ceilings (Ceilings: a Go copy, one libp2p TLS stream via
//     dht.StreamCeiling, one Flight DoPut stream; ParquetCeilings and
//     ParquetBound when merge or set-index run);
//   - each job of BenchConfig.Jobs (BenchJobs lists them): its put+barrier
//     and read seconds, MB/s, CPU seconds of every process, peak RSS,
//     minor faults and its rate over the slower network ceiling, on an
//     in-process cluster or on serve processes it starts (StartProcs);
//     BenchConfig.Repeat runs a job again on the same nodes;
//   - after the jobs and a pause, what memory touched for the first time
//     costs (FirstTouchCeilings) and each job's estimated share of it.
//
// BenchShuffle and BenchRecovery are the demo's case tables (partition
// counts and a small budget; node and coordinator loss, with replication 1
// and 2). Bench and the case tables write their tables to an io.Writer and
// block until done or until their context ends; they open and close their
// own clusters. Nothing here is used by a serving node.
package bench
