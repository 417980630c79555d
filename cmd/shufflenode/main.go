package main

import (
	"fmt"
	"io"
	"os"
)

const usage = `usage: shufflenode COMMAND [flags]

commands:
  demo      run the main job: an in-process cluster shuffles a synthetic table and verifies it
  shuffle   shuffle Parquet files by key columns into one Parquet file per partition
  merge     join two Parquet datasets on key columns (co-partitioned shuffles)
  set-index sort Parquet data by one column into range partitions
  gen-parquet write synthetic Parquet files (for trying shuffle, merge, set-index)
  rechunk   rechunk a Zarr v2 array on the cluster into a new Zarr v2 array
  layout    print an array shuffle's layout (__partitioned__ form)
  gen-zarr  write a synthetic Zarr v2 array (for trying rechunk)
  redistribute redistribute a DAP distributed array (.npy + dim_data per process) to a target distribution
  gen-dap   write a synthetic DAP distributed array (for trying redistribute)
  bench     the benchmark of record: ceilings, then each job (bench shuffle, bench recovery, bench scale: demo cases)
  serve     run one node (sidecar) until SIGINT/SIGTERM
  status    print the members a running node sees (--node API_ADDR)
  plan      print a rechunk plan (plan rechunk --old JSON --new JSON)

Run 'shufflenode COMMAND -h' for the flags of a command.
`

// commands maps subcommand names to their entry points; each returns the
// process exit status.
var commands = map[string]func(args []string, stdout, stderr io.Writer) int{
	"demo":         cmdDemo,
	"bench":        cmdBench,
	"shuffle":      cmdShuffle,
	"rechunk":      cmdRechunk,
	"merge":        cmdMerge,
	"set-index":    cmdSetIndex,
	"gen-parquet":  cmdGenParquet,
	"layout":       cmdLayout,
	"gen-zarr":     cmdGenZarr,
	"redistribute": cmdRedistribute,
	"gen-dap":      cmdGenDAP,
	"serve":        cmdServe,
	"status":       cmdStatus,
	"plan":         cmdPlan,
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, usage)
		return 2
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "shufflenode: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	return cmd(args[1:], stdout, stderr)
}
