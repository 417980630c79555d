package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/shufflenode/shufflenode/job"
)

// arrayJobFlags are the flags that the array jobs (rechunk, redistribute)
// share: the cluster, the shuffle ID, how many pieces move at once,
// logging, a CPU profile and the API's credentials.
type arrayJobFlags struct {
	name       string
	logLevel   string
	cpuProfile string
	auth       clientAuthFlags
	fs         *flag.FlagSet
}

// register adds the shared flags of job name, whose inputs are called
// units ("chunks", "local arrays"), to fs, filling cl, id and parallel.
func (f *arrayJobFlags) register(fs *flag.FlagSet, name, units string, cl *job.ClusterConfig, id *string, parallel *int) {
	f.name, f.fs = name, fs
	cl.MemoryLimit = 1 << 30
	fs.StringVar(id, "id", "", "shuffle ID (default: "+name+"-<time>)")
	fs.StringVar(&cl.Addr, "cluster", "", "API address of a running cluster (default: an in-process cluster)")
	fs.IntVar(&cl.Nodes, "nodes", 4, "nodes of the in-process cluster")
	fs.IntVar(parallel, "parallel", 0, units+" read/put and written at once (default 2 per node; small chunks are put up to 16 per node while they hold at most 16 MiB)")
	fs.Var((*byteSize)(&cl.MemoryLimit), "memory-limit", "memory budget per in-process node")
	fs.StringVar(&cl.DataDir, "data-dir", "", "in-process nodes' data directory (default: temporary)")
	fs.StringVar(&f.logLevel, "log-level", "warn", "log level")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of this process (with an in-process cluster: every node) to this file")
	f.auth.register(fs)
}

// prepare parses args and completes cl (credentials, logger) and the
// job's progress; ok is false with the exit code when the job must not run.
func (f *arrayJobFlags) prepare(fs *flag.FlagSet, args []string, cl *job.ClusterConfig, progress *job.Progress) (code int, ok bool) {
	if code, ok := parse(fs, args); !ok {
		return code, false
	}
	if err := f.auth.resolve(cl); err != nil {
		return f.fail(err, 2), false
	}
	*cl = clusterConfig(*cl, f.logLevel, os.Stderr)
	*progress = job.NewProgress(fs.Output())
	return 0, true
}

// fail prints err as the job's and returns code.
func (f *arrayJobFlags) fail(err error, code int) int {
	fmt.Fprintf(f.fs.Output(), "shufflenode %s: %v\n", f.name, err)
	return code
}
