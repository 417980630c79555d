"""Dask DataFrame shuffle, merge and set_index through real sidecars, against pandas."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import shufflenode

dd = pytest.importorskip("dask.dataframe")
import shufflenode.dask as snd  # noqa: E402


def frame(n: int, seed: int, skew: bool = False, nulls: bool = True) -> pd.DataFrame:
    """Random rows with int, float, string, bool, datetime columns (and nulls)."""
    rng = np.random.default_rng(seed)
    k = rng.zipf(1.5, n) % 50 if skew else rng.integers(0, n // 3 + 1, n)
    df = pd.DataFrame({
        "k": k.astype("int64"),
        "f": rng.normal(size=n),
        "s": pd.array([f"s{v}" for v in rng.integers(0, 40, n)], dtype="str"),
        "b": rng.integers(0, 2, n).astype(bool),
        "t": pd.to_datetime(rng.integers(0, 10**6, n), unit="s"),
        "i": pd.array(rng.integers(-5, 5, n), dtype="Int64"),
    })
    if nulls:
        df.loc[df.index % 7 == 3, "f"] = np.nan
        df.loc[df.index % 11 == 5, "s"] = None
        df.loc[df.index % 13 == 2, "t"] = pd.NaT
        df.loc[df.index % 5 == 1, "i"] = pd.NA
    return df


def like(pdf: pd.DataFrame, ddf) -> pd.DataFrame:
    """pdf with the dtypes Dask gives its columns (Dask stores strings as Arrow strings)."""
    return pdf.astype(ddf.dtypes.to_dict())


def canon(df: pd.DataFrame) -> pd.DataFrame:
    """Rows in one order, index dropped, for comparing as multisets."""
    df = df.reset_index(drop=True)
    return df.sort_values(list(df.columns), kind="stable").reset_index(drop=True)


@pytest.mark.parametrize("skew", [False, True])
def test_shuffle_equals_pandas(dask_client, skew):
    pdf = frame(3000, 1, skew)
    ddf = dd.from_pandas(pdf, npartitions=5)
    out = snd.shuffle(ddf, "k", npartitions=7)
    assert out.npartitions == 7
    parts = out.to_delayed()
    got = dask_client.compute(parts, sync=True)
    homes: dict[int, int] = {}
    for p, part in enumerate(got):
        for k in part["k"].unique():
            assert homes.setdefault(k, p) == p, f"key {k} in partitions {homes[k]} and {p}"
    whole = pd.concat(got)
    pd.testing.assert_frame_equal(whole.sort_index(kind="stable"), like(pdf, ddf))


def graph_id(out) -> str:
    """The first shuffle ID of a collection's graph (its barrier task's)."""
    key = next(str(k) for k in dict(out.__dask_graph__()) if "shufflenode-barrier-" in str(k))
    return key.removeprefix("shufflenode-barrier-")


def held_by(sidecars, sid: str) -> list[str]:
    """The nodes that still hold shuffle sid."""
    held = []
    with sidecars.client() as c:
        for addr in sidecars.addrs:
            try:
                c.action(addr, "status", {"shuffle": sid}, sid)
                held.append(addr)
            except shufflenode.NotFound:
                pass
    return held


def test_shuffle_graph_has_n_puts_a_barrier_and_m_reads(dask_client, sidecars):
    ddf = dd.from_pandas(frame(100, 2), npartitions=4)
    out = snd.shuffle(ddf, ["k", "s"], npartitions=3)
    keys = [str(k) for k in dict(out.__dask_graph__())]
    ours = [k for k in keys if k.startswith("shufflenode-")]
    assert len([k for k in ours if "-put-" in k]) == 4
    assert len([k for k in ours if "-barrier-" in k]) == 1
    assert len([k for k in ours if "-read-" in k]) == 3
    assert len(ours) == 4 + 1 + 3, ours
    assert held_by(sidecars, graph_id(out)) == sidecars.addrs, "created while the graph was built"


def test_the_last_read_closes_the_shuffles(dask_client, sidecars):
    left, right = frame(1500, 9), frame(400, 10).rename(columns=lambda c: c if c == "k" else c + "_r")
    dl, dr = dd.from_pandas(left, npartitions=4), dd.from_pandas(right, npartitions=2)
    cases = [snd.shuffle(dl, "k", npartitions=5), snd.set_index(dl, "f", npartitions=3),
             snd.merge(dl, dr, on="k", how="left", npartitions=4)]
    for out in cases:
        sid = graph_id(out)
        ids = [sid, sid.removesuffix("-l") + "-r"] if sid.endswith("-l") else [sid]
        first = out.compute()
        for s in ids:
            assert held_by(sidecars, s) == [], f"{s} still held after compute"
        again = out.compute()  # the put tasks create the closed shuffle again
        pd.testing.assert_frame_equal(canon(again), canon(first))
        for s in ids:
            assert held_by(sidecars, s) == [], f"{s} still held after the second compute"
    assert len(cases[2].compute()) == len(like(left, dl).merge(like(right, dr), on="k", how="left"))


def test_the_last_read_closes_the_shuffle_without_distributed(sidecars):
    pdf = frame(800, 11)
    out = snd.shuffle(dd.from_pandas(pdf, npartitions=3), "k", npartitions=4, nodes=sidecars.addrs)
    sid = graph_id(out)
    got = out.compute(scheduler="sync")
    assert held_by(sidecars, sid) == []
    assert len(got) == len(pdf)
    assert len(out.partitions[1].compute(scheduler="sync")) < len(pdf)
    assert held_by(sidecars, sid) == sidecars.addrs, "one read of four does not close"


@pytest.mark.parametrize("how", ["inner", "left", "right", "outer"])
def test_merge_equals_pandas(dask_client, how):
    left = frame(2000, 3, skew=True)
    right = frame(600, 4).rename(columns=lambda c: c if c == "k" else c + "_r")
    dl, dr = dd.from_pandas(left, npartitions=4), dd.from_pandas(right, npartitions=3)
    got = snd.merge(dl, dr, how=how, on="k", npartitions=5).compute()
    want = like(left, dl).merge(like(right, dr), how=how, on="k")
    assert list(got.columns) == list(want.columns)
    pd.testing.assert_frame_equal(canon(got), canon(want))


def test_merge_left_on_right_on_suffixes(dask_client):
    left, right = frame(500, 5), frame(400, 6).rename(columns={"k": "key"})
    dl, dr = dd.from_pandas(left, npartitions=3), dd.from_pandas(right, npartitions=2)
    got = snd.merge(dl, dr, left_on=["k", "b"], right_on=["key", "b"], npartitions=4).compute()
    want = like(left, dl).merge(like(right, dr), left_on=["k", "b"], right_on=["key", "b"])
    pd.testing.assert_frame_equal(canon(got), canon(want))


@pytest.mark.parametrize("column", ["f", "t", "s", "k"])
def test_set_index_equals_pandas(dask_client, column):
    pdf = frame(2500, 7, skew=column == "k")
    ddf = dd.from_pandas(pdf, npartitions=5)
    out = snd.set_index(ddf, column, npartitions=6)
    assert out.known_divisions
    got = dask_client.compute(out.to_delayed(), sync=True)
    divs = out.divisions
    for p, part in enumerate(got):
        idx = part.index.dropna()
        if len(idx):
            assert divs[p] <= idx.min() and (idx.max() < divs[p + 1] or p == len(got) - 1)
            assert idx.is_monotonic_increasing
    whole = pd.concat(got)
    want = like(pdf, ddf).set_index(column)
    pd.testing.assert_frame_equal(canon(whole.reset_index()), canon(want.reset_index()))
    assert whole.index.dropna().is_monotonic_increasing


def test_set_index_given_divisions(dask_client):
    pdf = frame(1000, 8, nulls=False)
    ddf = dd.from_pandas(pdf, npartitions=3)
    out = snd.set_index(ddf, "k", divisions=[0, 50, 100, 200, 400])
    assert out.divisions == (0, 50, 100, 200, 400)
    got = out.compute()
    pd.testing.assert_frame_equal(canon(got.reset_index()), canon(like(pdf, ddf).set_index("k").reset_index()))
