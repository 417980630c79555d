package client

import (
	"cmp"
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/shufflenode/shufflenode/flightproto"
	"github.com/shufflenode/shufflenode/spec"
)

// maxPutBatch bounds the tasks Run puts in one DoPut stream.
const maxPutBatch = 64

// minBatchedTasks is the fewest tasks a job has for Run to put them in
// batches by default. A batch's records stay held (client and node) until
// each of its tasks is answered, so batches of large tasks cost memory for
// no gain: with 500 tasks of 0.5 MiB on 4 in-process nodes batching raised
// the demo's peak RSS from ~450 to ~630 MB at the same speed (2026-11-28),
// while past a few thousand tasks a stream per task is what costs.
const minBatchedTasks = 2000

// An array's old chunks go several to a stream too when they are small
// (at most maxBatchedChunkBytes, nodes from revision 5): at (10000, 10000)
// f8 in chunks of (1, 10000), a stream per chunk cost the nodes about as
// much as the chunks' bytes. A batch holds at most arrayBatchBytes of
// chunks, which stay held on the client until each is answered.
const (
	maxBatchedChunkBytes = 1 << 20
	arrayBatchBytes      = 8 << 20
)

// putsSeveral reports whether Run puts n tasks several to a DoPut stream:
// Job.PutBatch above 1, or by default (PutBatch 0) at least
// minBatchedTasks tasks from Input without PutOn, for an array only of
// chunks of known size up to maxBatchedChunkBytes.
func (job Job) putsSeveral(n int) bool {
	switch {
	case job.PutBatch != 0:
		return job.PutBatch > 1
	case job.PutOn != nil || job.InputFile != nil || n < minBatchedTasks:
		return false
	case job.Spec.Kind == spec.Array:
		b := largestChunkBytes(job.Spec)
		return b > 0 && b <= maxBatchedChunkBytes
	}
	return true
}

// putBatch is how many tasks of n Run puts per DoPut stream with workers
// streams at once (Job.PutBatch): one unless putsSeveral, else about four
// batches per worker, so the work stays spread, at most maxPutBatch and,
// for an array, arrayBatchBytes of chunks.
func (job Job) putBatch(n, workers int) int {
	if job.PutBatch != 0 {
		return max(job.PutBatch, 1)
	}
	if !job.putsSeveral(n) {
		return 1
	}
	size := min(max(n/(4*max(workers, 1)), 1), maxPutBatch)
	if job.Spec.Kind == spec.Array {
		size = min(size, max(int(arrayBatchBytes/largestChunkBytes(job.Spec)), 1))
	}
	return size
}

// batched is a batch of tasks for one DoPut, and its index (which spreads
// the batches over the nodes).
type batched struct {
	k     int
	tasks []int
}

// feedBatches sends tasks in batches of size on ch, then closes it.
func feedBatches(ctx context.Context, ch chan<- batched, tasks []uint64, size int) {
	defer close(ch)
	for k := 0; k*size < len(tasks); k++ {
		b := batched{k: k}
		for _, t := range tasks[k*size : min((k+1)*size, len(tasks))] {
			b.tasks = append(b.tasks, int(t))
		}
		select {
		case ch <- b:
		case <-ctx.Done():
			return
		}
	}
}

// putBatched puts a batch of tasks: in one stream of several tasks where
// the node takes them, else one by one; a task whose put in the stream
// failed with a retryable code (or whose input failed, as putTask retries
// it) is run again on its own (putTask, with new attempts). done gets each
// task's final error, as putTask's.
func putBatched(ctx context.Context, job Job, res *Result, schema *arrow.Schema, b batched, done func(error)) {
	a0 := res.peekAttempt(b.tasks[0])
	n := res.pick(b.k + int(a0))
	if len(b.tasks) == 1 || !res.takesTasks(ctx, n, job.Spec.Kind == spec.Array) {
		for _, t := range b.tasks {
			done(putTask(ctx, job, res, schema, t))
		}
		return
	}
	tasks := make([]TaskPut, len(b.tasks))
	for i, t := range b.tasks {
		tasks[i] = TaskPut{Task: uint64(t), Attempt: res.attempt(t)}
	}
	res.attempts.Add(int64(len(tasks)))
	c := res.clients[n]
	out, _ := c.PutTasks(ctx, job.Spec.ID, schema, tasks, func(i int) ([]arrow.Record, error) { return job.Input(b.tasks[i]) })
	for i, t := range b.tasks {
		e := out[i].Err
		res.putEnded(n, e)
		switch {
		case e != nil && retryable(e) && ctx.Err() == nil && cmp.Or(job.MaxAttempts, 3) > 1:
			done(putTask(ctx, job, res, schema, t))
		case e != nil:
			done(fmt.Errorf("client: shuffle %s task %d on %s: %w", job.Spec.ID, t, c.Addr(), e))
		default:
			done(nil)
		}
	}
}

// takesTasks reports whether client i's node takes puts of several tasks,
// of an array shuffle when array is set (its revision, asked once).
func (r *Result) takesTasks(ctx context.Context, i int, array bool) bool {
	r.revOnce[i].Do(func() {
		var m membersReply
		if r.clients[i].action(ctx, flightproto.ActionMembers, struct{}{}, &m) == nil {
			r.revs[i] = m.Revision
		}
	})
	if array {
		return r.revs[i] >= flightproto.MinArrayPutTasksRevision
	}
	return r.revs[i] >= flightproto.MinPutTasksRevision
}

// peekAttempt is the attempt number task t's next put takes.
func (r *Result) peekAttempt(t int) uint32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.next[t]
}
