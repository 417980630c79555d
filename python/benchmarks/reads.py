"""Reads of many small partitions: ``Client.read_many`` of every partition of a shuffle.

Starts 3 local serve processes, then --repeat times: creates a hash shuffle of --tasks
tasks of --rows rows (three int64 columns) into --partitions partitions, puts and seals
it, and times ``read_many`` of all its partitions, checking that every row came back.
Prints the read's wall time and the CPU seconds of this process and of the serve
processes.

    python python/benchmarks/reads.py --partitions 20000
"""

from __future__ import annotations

import argparse
import time
import uuid

import numpy as np
import psutil
import pyarrow as pa

import shufflenode
from shufflenode.frames import serialize

SCHEMA = pa.schema([("id", pa.int64()), ("k", pa.int64()), ("v", pa.int64())])


def cpu(procs: list[psutil.Process]) -> float:
    return sum(p.cpu_times().user + p.cpu_times().system for p in procs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", type=int, default=100)
    ap.add_argument("--rows", type=int, default=2000, help="rows per task (24 B each)")
    ap.add_argument("--partitions", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    data = [[pa.record_batch([np.arange(a.rows, dtype=np.int64) + t * a.rows,
                              rng.integers(0, 1 << 30, a.rows), np.zeros(a.rows, np.int64)],
                             schema=SCHEMA)] for t in range(a.tasks)]
    with shufflenode.LocalSidecars(3, memory_limit="512MiB") as sc, sc.client() as c:
        nodes = [psutil.Process(s.proc.pid) for s in sc.sidecars]
        for _ in range(a.repeat):
            sid = f"reads-{uuid.uuid4().hex[:8]}"
            c.create({"id": sid, "kind": "dataframe", "tasks": a.tasks, "partitions": a.partitions,
                      "schema": serialize(SCHEMA), "rule": {"kind": "hash", "columns": ["k"]}})
            r = shufflenode.TaskRunner(c, sid, SCHEMA, lambda t: data[t], parallel=2 * len(c.nodes))
            r.put_all(range(a.tasks))
            r.round = 1
            r.settle([])
            c0, n0, t0 = time.process_time(), cpu(nodes), time.perf_counter()
            got = c.read_many(sid, range(a.partitions))
            wall = time.perf_counter() - t0
            rows = sum(t.num_rows for t in got.values())
            if rows != a.tasks * a.rows:
                raise SystemExit(f"{sid}: {rows} rows read, {a.tasks * a.rows} put")
            print(f"read_many of {a.partitions} partitions ({rows} rows): {wall:.2f} s, "
                  f"client CPU {time.process_time() - c0:.2f} s, nodes CPU {cpu(nodes) - n0:.2f} s",
                  flush=True)
            c.close(sid)


if __name__ == "__main__":
    main()
