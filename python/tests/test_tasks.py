"""The pieces of the Dask graphs' tasks: the count of finished reads, and a read run
again after the graph's reads closed its shuffle."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import shufflenode
from shufflenode import _tasks as T

dd = pytest.importorskip("dask.dataframe")
import shufflenode.dask as snd  # noqa: E402


def test_read_counts_close_once_per_barrier():
    c = T.ReadCounts()
    assert c.open("g")
    assert [c.done("g", p, 3) for p in (0, 2, 0)] == [False, False, False]
    assert c.done("g", 1, 3), "the report that completes the set closes"
    assert not c.done("g", 1, 3), "a read run again after the close does not close again"
    assert not c.done("g", 0, 1)
    assert c.open("g"), "the next compute's barrier opens the count again"
    assert not c.open("g"), "a barrier run again while reads are counted keeps their count"
    assert not c.done("g", 0, 2) and c.done("g", 1, 2)


def test_read_counts_keep_a_bounded_number_of_graphs():
    c = T.ReadCounts(keep=3)
    for g in "abcde":
        c.open(g)
    assert c.done("e", 0, 1)
    assert len(c._done) == 3
    assert c.done("a", 0, 1), "a dropped graph counts from nothing again"


def test_read_after_the_close_creates_and_settles_again(sidecars):
    pdf = pd.DataFrame({"k": np.arange(300) % 17, "v": np.arange(300.0)})
    ddf = dd.from_pandas(pdf, npartitions=3)
    ctx = T.Ctx(tuple(sidecars.addrs))
    (plan,) = T.build(ctx, [snd._df_plan("reread-1", ddf, {"kind": "hash", "columns": ["k"]},
                                         4, False)])
    assert plan.created
    parts = ddf.to_delayed()
    rows = [T.put(ctx, plan, i, p.compute(scheduler="sync")) for i, p in enumerate(parts)]
    sealed = T.barrier(ctx, [plan], [T.Inputs(parts)], [], rows)
    want = [T.read(ctx, plan, sealed, p) for p in range(4)]
    assert [T.read_done(ctx, [plan], p, 4) for p in range(4)] == [False, False, False, True]
    with sidecars.client() as c, pytest.raises(shufflenode.NotFound):
        c.status(plan.id)
    assert T.read(ctx, plan, sealed, 2).equals(want[2]), "read again from the inputs"
    with sidecars.client() as c:
        assert c.status(plan.id)["phase"] == "sealed"
        c.close(plan.id)
