"""Puts of several tasks in one DoPut against real serve processes: one answer per task,
a task that fails alone, retries on their own, and every row read exactly once."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pytest

import shufflenode
from shufflenode import TaskOutcome, TaskPut, TaskRunner
from shufflenode.client import MAX_PUT_BATCH, MIN_BATCHED_TASKS, fnv32a
from shufflenode.errors import Internal, from_code
from shufflenode.frames import serialize

SCHEMA = pa.schema([("id", pa.int64()), ("k", pa.int64()), ("v", pa.float64())])


def rows_of(t: int) -> int:
    return 0 if t % 11 == 6 else 5 + t % 13


def task_batches(t: int) -> list[pa.RecordBatch]:
    """Input task t: rows whose ids say which task put them (no rows when t % 11 == 6)."""
    n = rows_of(t)
    rng = np.random.default_rng(t)
    table = pa.table({"id": np.arange(n, dtype=np.int64) + t * 1000,
                      "k": rng.integers(0, 1000, n), "v": rng.normal(size=n)}, schema=SCHEMA)
    return table.to_batches(max_chunksize=max(n // 2, 1)) if n else []


def spec(sid: str, tasks: int, partitions: int) -> dict:
    return {"id": sid, "kind": "dataframe", "tasks": tasks, "partitions": partitions,
            "schema": serialize(SCHEMA), "rule": {"kind": "hash", "columns": ["k"]}}


def new_id(kind: str) -> str:
    return f"{kind}-{uuid.uuid4().hex[:8]}"


def assert_every_row_once(c: shufflenode.Client, sid: str, partitions: int,
                          tasks: Sequence[int]) -> None:
    got = c.read_many(sid, range(partitions))
    ids = np.sort(np.concatenate([t.column("id").to_numpy() for t in got.values()]))
    want = np.sort(np.concatenate([b.column("id").to_numpy() for t in tasks
                                   for b in task_batches(t)] or [np.array([], np.int64)]))
    assert len(ids) == len(want), f"{len(ids)} rows read, {len(want)} put"
    np.testing.assert_array_equal(ids, want)


class Counting(shufflenode.Client):
    """A Client that counts its puts: streams of several tasks, and puts of one (with
    their attempt numbers)."""

    def __init__(self, *a, **kw) -> None:
        super().__init__(*a, **kw)
        self.lock = threading.Lock()
        self.streams: list[list[int]] = []
        self.ones: list[tuple[int, int]] = []

    def put_tasks(self, shuffle, schema, tasks, addr=None) -> list[TaskOutcome]:
        with self.lock:
            self.streams.append([t.task for t in tasks])
        return super().put_tasks(shuffle, schema, tasks, addr)

    def put(self, shuffle, task, attempt, *a, **kw) -> dict:
        with self.lock:
            self.ones.append((task, attempt))
        return super().put(shuffle, task, attempt, *a, **kw)


def test_one_answer_per_task_and_a_bad_task_fails_alone(sidecars):
    sid = new_id("tasks")
    addr = sidecars.addrs[1]
    with sidecars.client() as c:
        assert c.revision(addr) >= 4 and c.takes_tasks(addr)
        c.create(spec(sid, 12, 7))
        wrong = pa.schema([("id", pa.int64()), ("k", pa.int64()), ("v", pa.float32())])
        puts = [TaskPut(t, 0, task_batches(t)) for t in range(8)]
        puts[2] = TaskPut(2, 0, task_batches(2), rows=rows_of(2) + 1)  # declares a row too many
        puts[5] = TaskPut(5, 0, [b.cast(wrong) for b in task_batches(5)])  # another schema
        puts.append(TaskPut(40, 0, task_batches(8)))  # out of range
        out = c.put_tasks(sid, SCHEMA, puts, addr)
        assert [(o.task, o.attempt) for o in out] == [(p.task, p.attempt) for p in puts]
        failed = {o.task: o.error for o in out if o.error is not None}
        assert set(failed) == {2, 5, 40}
        assert all(isinstance(e, shufflenode.InvalidArgument) for e in failed.values())
        assert "declared" in str(failed[2]) and f"node {addr}" in str(failed[2])
        assert str(failed[5]).startswith(f"shufflenode: shuffle {sid} task 5")
        with pytest.raises(shufflenode.InvalidArgument, match=f"shuffle {sid} task 40"):
            out[-1].result()
        for o in out:
            if o.error is None:
                assert o.result()["rows"] == rows_of(o.task) and not o.reply.get("skipped")
        again = c.put_tasks(sid, SCHEMA, [TaskPut(t, 1, task_batches(t)) for t in (2, 5, 8, 9)]
                            + [TaskPut(0, 1, task_batches(0))], sidecars.addrs[0])
        assert [o.error for o in again] == [None] * 5
        assert again[-1].reply["skipped"], "a task with a finished attempt is skipped"
        rest = c.put_tasks(sid, SCHEMA, [TaskPut(t, 0, task_batches(t)) for t in (10, 11)])
        assert [o.reply["rows"] for o in rest] == [rows_of(10), rows_of(11)]
        assert c.barrier(sid)["sealed"]
        assert_every_row_once(c, sid, 7, range(12))
        c.close(sid)


def test_a_put_of_several_tasks_refuses_a_task_given_twice(sidecars):
    with sidecars.client() as c:
        with pytest.raises(shufflenode.InvalidArgument, match="task 3: given twice"):
            c.put_tasks("any", SCHEMA, [TaskPut(3, 0, []), TaskPut(3, 1, [])])
        assert c.put_tasks("any", SCHEMA, []) == []


def test_a_call_error_is_every_unanswered_task_s(sidecars):
    with sidecars.client() as c:
        out = c.put_tasks("no-such-shuffle", SCHEMA, [TaskPut(t, 0, task_batches(t)) for t in (0, 1)])
        assert [type(o.error) for o in out] == [shufflenode.NotFound] * 2
        assert [o.error.task for o in out] == [0, 1]


def test_run_puts_batches_and_every_row_arrives_once(sidecars):
    sid = new_id("batched")
    with Counting(sidecars.addrs) as c:
        c.run(spec(sid, 300, 13), SCHEMA, task_batches, put_batch=16)
        assert_every_row_once(c, sid, 13, range(300))
        assert sorted(t for s in c.streams for t in s) == list(range(300))
        assert max(len(s) for s in c.streams) == 16 and c.ones == []
        c.close(sid)


def test_run_batches_by_default_from_2000_tasks(sidecars):
    sid = new_id("default")
    with Counting(sidecars.addrs) as c:
        c.run(spec(sid, MIN_BATCHED_TASKS, 16), SCHEMA, task_batches)
        assert {len(s) for s in c.streams} == {MAX_PUT_BATCH, MIN_BATCHED_TASKS % MAX_PUT_BATCH}
        assert sorted(t for s in c.streams for t in s) == list(range(MIN_BATCHED_TASKS))
        assert_every_row_once(c, sid, 16, range(MIN_BATCHED_TASKS))
        c.close(sid)


def test_a_node_before_revision_4_gets_a_stream_per_task(sidecars):
    class Old(Counting):
        def revision(self, addr=None) -> int:
            return 3

    sid = new_id("old")
    with Old(sidecars.addrs) as c:
        c.run(spec(sid, 40, 5), SCHEMA, task_batches, put_batch=16)
        assert c.streams == [] and sorted(t for t, _ in c.ones) == list(range(40))
        assert_every_row_once(c, sid, 5, range(40))
        with pytest.raises(shufflenode.errors.Unimplemented, match="revision 3"):
            c.put_tasks(sid, SCHEMA, [TaskPut(0, 9, task_batches(0))])
        c.close(sid)


def test_a_task_s_status_code_maps_to_the_error_its_own_put_raises():
    e = from_code(3, "bad", shuffle="s", task=4, node="n")
    assert isinstance(e, shufflenode.InvalidArgument) and str(e) == "shufflenode: shuffle s task 4 node n: bad"
    assert [type(from_code(c, "")) for c in (1, 2, 4, 13, 14)] == [
        shufflenode.Unavailable, Internal, shufflenode.Unavailable, Internal, shufflenode.Unavailable]
    assert [type(from_code(c, "")) for c in (5, 6, 10)] == [
        shufflenode.NotFound, shufflenode.AlreadyExists, shufflenode.errors.Aborted]
    assert type(from_code(15, "")) is shufflenode.ShufflenodeError
    assert type(from_code(99, "")) is Internal


def runner(**kw) -> TaskRunner:
    return TaskRunner(shufflenode.Client("127.0.0.1:1"), "s", SCHEMA, task_batches, **kw)


def test_batch_size_follows_the_go_client():
    r = runner(parallel=6)
    assert r.batch_size(MIN_BATCHED_TASKS - 1) == 1
    assert r.batch_size(5000) == MAX_PUT_BATCH
    assert runner(parallel=12).batch_size(2000) == 41
    assert runner(dataframe=False).batch_size(5000) == 1, "arrays: a stream per chunk"
    assert runner(dataframe=False, put_batch=7).batch_size(5000) == 1
    assert runner(put_batch=7).batch_size(10) == 7
    assert runner(put_batch=1).batch_size(5000) == 1
    assert r._batches(range(5), 2) == [(0, [0, 1]), (1, [2, 3]), (2, [4])]
    on = runner(put_on=lambda t: t % 2)
    assert on._batches(range(7), 3) == [(0, [0, 2, 4]), (0, [6]), (1, [1, 3, 5])]


@pytest.mark.timeout(180)
def test_a_batch_on_a_killed_node_runs_again_task_by_task():
    """The node of the third stream is killed just before it: its tasks fail with
    Unavailable and each runs again on its own, with a new attempt, on another node;
    the coordinator then replays what the lost node held. Every row once."""

    class Killing(Counting):
        victim: shufflenode.Sidecar
        killed: list[int]

        def put_tasks(self, shuffle, schema, tasks, addr=None) -> list[TaskOutcome]:
            if not self.killed and len(self.streams) >= 2 and addr == self.victim.api:
                self.victim.kill()
                self.killed = [t.task for t in tasks]
            return super().put_tasks(shuffle, schema, tasks, addr)

    sid = new_id("killed")
    with shufflenode.LocalSidecars(3) as sc, Killing(sc.addrs) as c:
        # batch k of round 0 goes to node k, one at a time: the victim is the node of the
        # third or fifth stream, not the coordinator
        c.victim = sc.sidecars[2] if fnv32a(sid) % 3 != 2 else sc.sidecars[1]
        c.killed = []
        c.create(spec(sid, 48, 9))
        TaskRunner(c, sid, SCHEMA, task_batches, parallel=1, put_batch=8).settle(list(range(48)))
        assert not c.victim.alive() and len(c.killed) == 8
        again = {t for t, a in c.ones if 1 <= a < 1_000_000}  # round 0, not a replay
        assert again >= set(c.killed), "each task of the broken stream ran alone, with a new attempt"
        assert_every_row_once(c, sid, 9, range(48))
