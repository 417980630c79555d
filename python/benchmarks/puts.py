"""Puts of many small dataframe tasks: one DoPut stream per task vs several tasks per stream.

Starts local serve processes, then for each mode (alternating, --repeat times) creates a
hash shuffle of --tasks tasks of --rows rows (three int64 columns), puts every task with
``TaskRunner.put_all`` (2 puts at once per node, as ``Client.run``) and times it, then
seals it, reads every partition back and checks that every row arrived exactly once.
Inputs are built before the clock starts. Prints, per run, the put phase's wall time,
tasks per second, and CPU seconds of this process and of the serve processes.

    python python/benchmarks/puts.py --tasks 5000 --rows 200 --repeat 3
"""

from __future__ import annotations

import argparse
import time
import uuid

import numpy as np
import psutil
import pyarrow as pa

import shufflenode
from shufflenode.client import MAX_PUT_BATCH
from shufflenode.frames import serialize

SCHEMA = pa.schema([("id", pa.int64()), ("k", pa.int64()), ("v", pa.int64())])


def inputs(tasks: int, rows: int) -> list[list[pa.RecordBatch]]:
    """Every task's one batch, ids unique across tasks."""
    rng = np.random.default_rng(0)
    out = []
    for t in range(tasks):
        ids = np.arange(rows, dtype=np.int64) + t * rows
        out.append([pa.record_batch([ids, rng.integers(0, 1 << 30, rows), ids * 3], schema=SCHEMA)])
    return out


def cpu(procs: list[psutil.Process]) -> float:
    return sum(p.cpu_times().user + p.cpu_times().system for p in procs)


def one(c: shufflenode.Client, nodes: list[psutil.Process], data: list[list[pa.RecordBatch]],
        batch: int, partitions: int) -> dict[str, float]:
    sid = f"puts-{uuid.uuid4().hex[:8]}"
    c.create({"id": sid, "kind": "dataframe", "tasks": len(data), "partitions": partitions,
              "schema": serialize(SCHEMA), "rule": {"kind": "hash", "columns": ["k"]}})
    r = shufflenode.TaskRunner(c, sid, SCHEMA, lambda t: data[t], parallel=2 * len(c.nodes),
                               put_batch=batch)
    c0, n0, t0 = time.process_time(), cpu(nodes), time.perf_counter()
    r.put_all(range(len(data)))
    wall = time.perf_counter() - t0
    client_cpu, node_cpu = time.process_time() - c0, cpu(nodes) - n0
    r.round = 1
    r.settle([])
    got = c.read_many(sid, range(partitions))
    ids = np.sort(np.concatenate([t.column("id").to_numpy() for t in got.values()]))
    want = np.arange(sum(b.num_rows for d in data for b in d), dtype=np.int64)
    if not np.array_equal(ids, want):
        raise SystemExit(f"{sid}: rows read differ from rows put ({len(ids)} vs {len(want)})")
    c.close(sid)
    return {"wall": wall, "client_cpu": client_cpu, "node_cpu": node_cpu}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--nodes", type=int, default=3)
    ap.add_argument("--tasks", type=int, default=5000)
    ap.add_argument("--rows", type=int, default=200, help="rows per task (24 B each)")
    ap.add_argument("--partitions", type=int, default=64)
    ap.add_argument("--batch", type=int, default=MAX_PUT_BATCH, help="tasks per stream when batched")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    data = inputs(a.tasks, a.rows)
    with shufflenode.LocalSidecars(a.nodes, memory_limit="512MiB") as sc, sc.client() as c:
        nodes = [psutil.Process(s.proc.pid) for s in sc.sidecars]
        print(f"{a.tasks} tasks x {a.rows} rows ({a.rows * 24} B), {a.nodes} nodes, "
              f"{2 * a.nodes} puts at once, revision {c.revision()}")
        print(f"{'mode':<18} {'put s':>7} {'tasks/s':>9} {'client cpu s':>13} {'nodes cpu s':>12}")
        for _ in range(a.repeat):
            for name, batch in (("stream per task", 1), (f"{a.batch} per stream", a.batch)):
                m = one(c, nodes, data, batch, a.partitions)
                print(f"{name:<18} {m['wall']:>7.2f} {a.tasks / m['wall']:>9.0f} "
                      f"{m['client_cpu']:>13.2f} {m['node_cpu']:>12.2f}", flush=True)


if __name__ == "__main__":
    main()
