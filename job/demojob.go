package job

import (
	"context"
	"fmt"
	"io"

	"github.com/shufflenode/shufflenode/measure"
)

// DemoReport is a dataframe demo run as the demo command reports it.
type DemoReport struct {
	Report
	Nodes    int    // the cluster's members
	Embedded bool   // the nodes ran in this process
	Rule     string // hash or range
}

// RunDemoOn opens the cluster, runs the dataframe demo on it and stops it.
func RunDemoOn(ctx context.Context, cc ClusterConfig, c DemoConfig) (DemoReport, error) {
	cl, err := OpenCluster(ctx, cc)
	if err != nil {
		return DemoReport{}, err
	}
	defer cl.Close()
	c.Auth = cc.Auth
	rep, err := RunDemo(ctx, cl.Addrs, c)
	return DemoReport{Report: rep, Nodes: len(cl.Addrs), Embedded: cl.Embedded, Rule: c.withDefaults().Rule}, err
}

// Print writes the report as the demo command prints it.
func (r DemoReport) Print(w io.Writer) {
	fmt.Fprintf(w, "verified: every row arrived exactly once, in the partition its key maps to\n")
	fmt.Fprintf(w, "nodes        %d\n", r.Nodes)
	fmt.Fprintf(w, "rows         %d\n", r.Rows)
	fmt.Fprintf(w, "bytes        %d (%s)\n", r.Bytes, FormatBytes(r.Bytes))
	fmt.Fprintf(w, "tasks        %d -> partitions %d (%s)\n", r.Tasks, r.Partitions, r.Rule)
	fmt.Fprintf(w, "shuffle      %.2f s (create, put, barrier)\n", r.ShuffleSeconds)
	fmt.Fprintf(w, "read         %.2f s (every partition back from its owner)\n", r.ReadSeconds)
	fmt.Fprintf(w, "total        %.2f s, %.1f MB/s\n", r.TotalSeconds, r.MBps())
	printRecovery(w, r.Epoch, r.ReplaySet, r.Attempts, r.Tasks)
	fmt.Fprintf(w, "peak RSS     %s (%s)\n", FormatBytes(measure.PeakRSS()), processDesc(r.Embedded, r.Nodes))
}

// printRecovery writes, for a run that lost nodes, how many and what that
// cost in replayed tasks and put attempts.
func printRecovery(w io.Writer, epoch uint64, replaySet int, attempts int64, tasks int) {
	if epoch > 0 {
		fmt.Fprintf(w, "recovery     %d node(s) lost: %d finished tasks replayed, %d puts for %d tasks\n", epoch, replaySet, attempts, tasks)
	}
}

// processDesc says what this process held: the whole cluster, or the
// client only.
func processDesc(embedded bool, nodes int) string {
	if embedded {
		return fmt.Sprintf("whole process: %d nodes, client and verifier", nodes)
	}
	return "this process: client and verifier; the nodes run in their own"
}

// ArrayDemoReport is an array demo run as the demo command reports it.
type ArrayDemoReport struct {
	ArrayReport
	Nodes    int    // the cluster's members
	Embedded bool   // the nodes ran in this process
	Desc     string // "<f8 10000,10000, chunks 10,10000 -> 10000,10"
}

// RunArrayDemoOn opens the cluster, runs the array demo on it and stops it.
func RunArrayDemoOn(ctx context.Context, cc ClusterConfig, c ArrayConfig, desc string) (ArrayDemoReport, error) {
	cl, err := OpenCluster(ctx, cc)
	if err != nil {
		return ArrayDemoReport{}, err
	}
	defer cl.Close()
	c.Auth = cc.Auth
	rep, err := RunArrayDemo(ctx, cl.Addrs, c)
	return ArrayDemoReport{ArrayReport: rep, Nodes: len(cl.Addrs), Embedded: cl.Embedded, Desc: desc}, err
}

// Print writes the report as the demo command prints it with --array.
func (r ArrayDemoReport) Print(w io.Writer) {
	fmt.Fprintf(w, "verified: every element of every new chunk equals the input's\n")
	fmt.Fprintf(w, "nodes        %d\n", r.Nodes)
	fmt.Fprintf(w, "array        %s (%d -> %d chunks)\n", r.Desc, r.OldChunks, r.NewChunks)
	fmt.Fprintf(w, "bytes        %d (%s)\n", r.Bytes, FormatBytes(r.Bytes))
	fmt.Fprintf(w, "rechunk      %.2f s (create, put, barrier)\n", r.ShuffleSeconds)
	fmt.Fprintf(w, "read         %.2f s (every new chunk back from its owner)\n", r.ReadSeconds)
	fmt.Fprintf(w, "total        %.2f s, %.1f MB/s\n", r.TotalSeconds, r.MBps())
	if r.Epoch > 0 {
		fmt.Fprintf(w, "recovery     %d node(s) lost: %d task runs replayed\n", r.Epoch, r.Replayed)
	}
	fmt.Fprintf(w, "peak RSS     %s (%s)\n", FormatBytes(measure.PeakRSS()), processDesc(r.Embedded, r.Nodes))
}
