"""Dask `tasks`, Dask `p2p` and Dask + shufflenode on the same LocalCluster.

Workloads (full size; --small divides them): shuffle of 16M rows x 32 B 1000 -> 1000
partitions; merge 16M x 4M rows at 1000 partitions; set_index of 16M rows at 1000
partitions; rechunk of a (10000, 10000) f8 array from (10, 10000) to (10000, 10) chunks.
Prints wall time, CPU seconds and peak RSS of every process (client, scheduler, workers,
sidecars) per method and workload.

    python python/benchmarks/compare.py --small
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import dask
import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import psutil
from distributed import Client, LocalCluster

import shufflenode
import shufflenode.dask as snd
from shufflenode.plugin import SidecarPlugin


@dataclass
class Size:
    rows: int
    parts: int
    side: int
    thin: int


FULL = Size(16_000_000, 1000, 10_000, 10)


def frame(i: int, rows: int, parts: int, seed: int) -> pd.DataFrame:
    """Partition i: rows/parts rows of 4 int64 columns (32 B a row)."""
    n = rows // parts
    rng = np.random.default_rng(seed * 100_003 + i)
    return pd.DataFrame({"k": rng.integers(0, rows, n), "a": rng.integers(0, 1 << 40, n),
                         "b": rng.integers(0, 1 << 40, n), "c": np.arange(n) + i * n})


def df_of(rows: int, parts: int, seed: int) -> dd.DataFrame:
    return dd.from_map(frame, range(parts), rows=rows, parts=parts, seed=seed)


def workloads(size: Size) -> dict[str, dict[str, Callable[[], Any]]]:
    """For each workload, a builder per method of what to compute."""
    r, p = size.rows, size.parts
    x = lambda: da.random.default_rng(0).random((size.side, size.side),  # noqa: E731
                                                chunks=(size.thin, size.side))
    new = (size.side, size.thin)

    def count(out: dd.DataFrame) -> Any:
        return out.map_partitions(len).sum()

    return {
        "shuffle": {m: (lambda m=m: count(snd.shuffle(df_of(r, p, 1), "k", p) if m == "shufflenode"
                                         else df_of(r, p, 1).shuffle("k", npartitions=p,
                                                                      shuffle_method=m)))
                    for m in METHODS},
        "merge": {m: (lambda m=m: count(snd.merge(df_of(r, p, 2), df_of(r // 4, p // 4 or 1, 3),
                                                  on="k", npartitions=p) if m == "shufflenode"
                                        else df_of(r, p, 2).merge(df_of(r // 4, p // 4 or 1, 3),
                                                                  on="k", npartitions=p,
                                                                  shuffle_method=m)))
                  for m in METHODS},
        "set_index": {m: (lambda m=m: count(snd.set_index(df_of(r, p, 4), "k", p)
                                            if m == "shufflenode"
                                            else df_of(r, p, 4).set_index("k", npartitions=p,
                                                                           shuffle_method=m)))
                      for m in METHODS},
        "rechunk": {m: (lambda m=m: (snd.rechunk(x(), new) if m == "shufflenode"
                                     else x().rechunk(new, method=m)).sum())
                    for m in METHODS},
    }


METHODS = ("tasks", "p2p", "shufflenode")


class Sampler:
    """Samples RSS of processes every 50 ms; CPU seconds from start to stop."""

    def __init__(self, procs: dict[str, int]) -> None:
        self.procs = {name: psutil.Process(pid) for name, pid in procs.items()}
        self.peak = dict.fromkeys(self.procs, 0)
        self.cpu0 = {n: self._cpu(p) for n, p in self.procs.items()}
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    @staticmethod
    def _cpu(p: psutil.Process) -> float:
        try:
            t = p.cpu_times()
            return t.user + t.system
        except psutil.Error:
            return 0.0

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            for n, p in self.procs.items():
                try:
                    self.peak[n] = max(self.peak[n], p.memory_info().rss)
                except psutil.Error:
                    pass

    def stop(self) -> dict[str, tuple[float, int]]:
        self._stop.set()
        self._t.join()
        return {n: (self._cpu(p) - self.cpu0[n], self.peak[n]) for n, p in self.procs.items()}


def processes(client: Client, sc: shufflenode.LocalSidecars) -> dict[str, int]:
    procs = {"client": os.getpid()}
    if (sched := client.run_on_scheduler(os.getpid)) != os.getpid():
        procs["scheduler"] = sched  # LocalCluster runs it in the client process
    for i, (_, pid) in enumerate(sorted(client.run(os.getpid).items())):
        procs[f"worker-{i}"] = pid
    for s in sc.sidecars:
        procs[s.name] = s.proc.pid
    return procs


def run_one(client: Client, sc: shufflenode.LocalSidecars, build: Callable[[], Any]
            ) -> tuple[float, dict[str, tuple[float, int]]]:
    sampler = Sampler(processes(client, sc))
    t0 = time.perf_counter()
    client.compute(build()).result()
    wall = time.perf_counter() - t0
    return wall, sampler.stop()


def table(rows: list[tuple[str, str, float, dict[str, tuple[float, int]]]]) -> str:
    names = list(rows[0][3])
    head = f"{'workload':<10} {'method':<12} {'wall s':>7} {'cpu s':>7} " + " ".join(
        f"{n[:14]:>14}" for n in names)
    lines = [head, "-" * len(head)]
    for wl, m, wall, per in rows:
        cpu = sum(c for c, _ in per.values())
        mem = " ".join(f"{per[n][0]:>5.1f}s {per[n][1] / 2**20:>5.0f}Mi" for n in names)
        lines.append(f"{wl:<10} {m:<12} {wall:>7.2f} {cpu:>7.1f} {mem}")
    return "\n".join(lines) + "\n(per process: CPU seconds and peak RSS; cpu s: the sum over all processes)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--small", action="store_true", help="1/80 of the rows, 1/50 of the partitions")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--only", default="", help="comma-separated workloads")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--rows", type=int, default=0, help="dataframe rows (the merge's right side: a quarter)")
    ap.add_argument("--partitions", type=int, default=0, help="dataframe partitions, in and out")
    ap.add_argument("--side", type=int, default=0,
                    help="the rechunked square array's side (chunks of 10 rows to 10 columns)")
    args = ap.parse_args()
    size = Size(200_000, 20, 1000, 10) if args.small else FULL
    if args.rows or args.partitions or args.side:
        size = Size(args.rows or size.rows, args.partitions or size.parts, args.side or size.side, size.thin)
    chosen = [w for w in args.only.split(",") if w] or list(workloads(size))
    methods = args.methods.split(",")
    with shufflenode.LocalSidecars(args.workers, memory_limit="1GiB") as sc, LocalCluster(
            n_workers=args.workers, threads_per_worker=1, dashboard_address=None,
            memory_limit="4GiB") as cluster, Client(cluster) as client:
        client.register_plugin(SidecarPlugin(sc.addrs))
        rows = []
        for wl in chosen:
            for m in methods:
                with dask.config.set({"dataframe.shuffle.method": m if m != "shufflenode" else "tasks"}):
                    wall, per = run_one(client, sc, workloads(size)[wl][m])
                rows.append((wl, m, wall, per))
                print(f"{wl} {m}: {wall:.2f} s", flush=True)
        print(table(rows))


if __name__ == "__main__":
    main()
