"""Bad input and unreachable or locked sidecars raise exceptions naming the shuffle."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import shufflenode
from shufflenode.sidecar import free_port

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")
import shufflenode.dask as snd  # noqa: E402


def small() -> dd.DataFrame:
    return dd.from_pandas(pd.DataFrame({"k": np.arange(20), "v": np.ones(20)}), npartitions=2)


def test_merge_key_dtypes_must_hash_alike(sidecars):
    left = small()
    right = dd.from_pandas(pd.DataFrame({"k": np.arange(5.0), "w": np.ones(5)}), npartitions=1)
    with pytest.raises(shufflenode.InvalidArgument, match=r"shuffle merge-\S+: merge keys 'k'"):
        snd.merge(left, right, on="k", nodes=sidecars.addrs)


def test_missing_column(sidecars):
    with pytest.raises(shufflenode.InvalidArgument, match="no column"):
        snd.shuffle(small(), "nope", nodes=sidecars.addrs)


def test_sidecar_not_running_names_the_shuffle():
    addr = f"127.0.0.1:{free_port()}"
    out = snd.shuffle(small(), "k", npartitions=2, nodes=[addr])
    with pytest.raises(shufflenode.Unavailable, match=rf"shuffle shuffle-\S+ node {addr}"):
        out.compute(scheduler="sync")


def test_wrong_token():
    with shufflenode.LocalSidecars(1, token="right-token") as sc:
        good = snd.shuffle(small(), "k", npartitions=2, nodes=sc.addrs, auth=sc.auth)
        assert len(good.compute(scheduler="sync")) == 20
        bad = snd.shuffle(small(), "k", npartitions=2, nodes=sc.addrs,
                          auth=shufflenode.Auth(token="wrong"))
        with pytest.raises(shufflenode.Unauthenticated, match=r"shuffle shuffle-\S+"):
            bad.compute(scheduler="sync")
        with pytest.raises(shufflenode.Unauthenticated):
            shufflenode.Client(sc.addrs).members()


def test_client_errors_map_codes(sidecars):
    schema = pa.schema([("k", pa.int64())])
    with sidecars.client() as c:
        with pytest.raises(shufflenode.NotFound, match="shuffle nosuch"):
            c.barrier("nosuch")
        spec = {"id": "bad-rule", "kind": "dataframe", "tasks": 1, "partitions": 2,
                "schema": "AAAA", "rule": {"kind": "hash", "columns": ["k"]}}
        with pytest.raises(shufflenode.InvalidArgument, match="shuffle bad-rule"):
            c.create(spec)
        from shufflenode.frames import serialize

        spec["id"], spec["schema"] = "put-check", serialize(schema)
        c.create(spec)
        with pytest.raises(shufflenode.AlreadyExists):
            c.create(spec)
        other = pa.record_batch([pa.array([1.0])], names=["k"])
        with pytest.raises(shufflenode.InvalidArgument, match="shuffle put-check task 0"):
            c.put("put-check", 0, 0, other.schema, [other])
        c.close("put-check")
