"""Losing a sidecar or a Dask worker in the middle of a merge: every row exactly once."""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import pandas as pd
import pytest

import shufflenode
from shufflenode.client import fnv32a
from shufflenode.plugin import SidecarPlugin

distributed = pytest.importorskip("distributed")
dd = pytest.importorskip("dask.dataframe")
import shufflenode.dask as snd  # noqa: E402


def slow(part: pd.DataFrame) -> pd.DataFrame:
    time.sleep(0.4)
    return part


def sides(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    left = pd.DataFrame({"k": rng.integers(0, 500, 4000), "v": rng.normal(size=4000)})
    right = pd.DataFrame({"k": np.arange(500), "w": rng.normal(size=500)})
    return left, right


def canon(df: pd.DataFrame) -> pd.DataFrame:
    return df.sort_values(list(df.columns)).reset_index(drop=True)


@pytest.fixture
def own_cluster():
    with shufflenode.LocalSidecars(3) as sc, distributed.LocalCluster(
            n_workers=3, threads_per_worker=1, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        client.register_plugin(SidecarPlugin(sc.addrs))
        yield sc, client


def merged(left: pd.DataFrame, right: pd.DataFrame, sc) -> dd.DataFrame:
    dl = dd.from_pandas(left, npartitions=12).map_partitions(slow)
    dr = dd.from_pandas(right, npartitions=3)
    return snd.merge(dl, dr, on="k", how="left", npartitions=6, nodes=sc.addrs)


def shuffle_home(out: dd.DataFrame, nodes: list[str]) -> str:
    key = next(str(k) for k in dict(out.__dask_graph__()) if "shufflenode-barrier-" in str(k))
    sid = key.removeprefix("shufflenode-barrier-")
    return nodes[fnv32a(sid) % len(nodes)]


def held(out: dd.DataFrame, nodes: list[str]) -> list[tuple[str, str]]:
    """The (shuffle, node) pairs of a merge's two shuffles that nodes still hold."""
    key = next(str(k) for k in dict(out.__dask_graph__()) if "shufflenode-barrier-" in str(k))
    left = key.removeprefix("shufflenode-barrier-")
    found = []
    with shufflenode.Client(nodes) as c:
        for sid in (left, left.removesuffix("-l") + "-r"):
            for addr in nodes:
                try:
                    c.action(addr, "status", {"shuffle": sid}, sid)
                    found.append((sid, addr))
                except shufflenode.NotFound:
                    pass
    return found


@pytest.mark.timeout(300)
def test_sidecar_killed_mid_merge(own_cluster):
    sc, client = own_cluster
    left, right = sides(11)
    out = merged(left, right, sc)
    home = shuffle_home(out, sc.addrs)
    victim = next(s for s in sc.sidecars if s.api != home)
    threading.Timer(1.2, victim.kill).start()
    got = out.compute()
    assert not victim.alive()
    pd.testing.assert_frame_equal(canon(got), canon(left.merge(right, on="k", how="left")))
    assert held(out, [s.api for s in sc.sidecars if s.alive()]) == []


@pytest.mark.timeout(300)
def test_dask_worker_killed_while_its_sidecar_lives(own_cluster):
    sc, client = own_cluster
    left, right = sides(12)
    out = merged(left, right, sc)
    pids = client.run(os.getpid)
    victim = pids[sorted(pids)[1]]
    threading.Timer(1.2, os.kill, (victim, signal.SIGKILL)).start()
    got = out.compute()
    time.sleep(0.1)
    assert victim not in client.run(os.getpid).values(), "the worker was not killed"
    assert all(s.alive() for s in sc.sidecars)
    pd.testing.assert_frame_equal(canon(got), canon(left.merge(right, on="k", how="left")))
    assert held(out, sc.addrs) == []
