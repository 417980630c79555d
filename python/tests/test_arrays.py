"""Array rechunks through real sidecars: Dask arrays, xarray, __partitioned__ and DAP."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import shufflenode

da = pytest.importorskip("dask.array")
import shufflenode.dask as snd  # noqa: E402


@pytest.mark.parametrize("dtype", ["<f8", "<i4", "|u1", ">f4", "<i8", "|b1", "<u2", "<c16"])
def test_rechunk_dtypes(dask_client, dtype):
    rng = np.random.default_rng(0)
    a = (rng.normal(size=(30, 17)) * 100).astype(dtype)
    x = da.from_array(a, chunks=((10, 5, 15), (7, 10)))
    y = snd.rechunk(x, ((4, 26), (3, 3, 3, 8)))
    assert y.chunks == ((4, 26), (3, 3, 3, 8))
    np.testing.assert_array_equal(y.compute(), a)


def test_rechunk_3d_irregular(dask_client):
    a = np.arange(6 * 7 * 8, dtype="<f8").reshape(6, 7, 8)
    x = da.from_array(a, chunks=(2, (3, 4), (1, 7)))
    y = snd.rechunk(x, ((6,), (1, 1, 5), (4, 4)))
    np.testing.assert_array_equal(y.compute(), a)
    assert sum(1 for k in dict(y.__dask_graph__()) if "shufflenode-put-" in str(k)) == 3 * 2 * 2


def test_rechunk_closes_its_shuffle(dask_client, sidecars):
    a = np.arange(40.0).reshape(5, 8)
    y = snd.rechunk(da.from_array(a, chunks=(1, 8)), (5, 2))
    sid = next(str(k) for k in dict(y.__dask_graph__()) if "shufflenode-barrier-" in str(k))
    sid = sid.removeprefix("shufflenode-barrier-")
    assert sum(1 for k in dict(y.__dask_graph__()) if str(k).startswith("shufflenode-")) == 5 + 1
    np.testing.assert_array_equal(y.compute(), a)
    with sidecars.client() as c, pytest.raises(shufflenode.NotFound):
        c.status(sid)


def test_rechunk_rows_to_columns(dask_client):
    a = np.random.default_rng(1).normal(size=(100, 100))
    x = da.from_array(a, chunks=(1, 100))
    y = snd.rechunk(x, (100, 1))
    np.testing.assert_array_equal(y.compute(), a)


def test_rechunk_xarray_dataset(dask_client):
    xr = pytest.importorskip("xarray")
    rng = np.random.default_rng(2)
    ds = xr.Dataset({"t": (("x", "y"), rng.normal(size=(20, 12))),
                     "m": (("y",), rng.integers(0, 9, 12))}).chunk({"x": 5, "y": 12})
    out = snd.rechunk_dataset(ds, {"x": 20, "y": 4})
    assert out["t"].data.chunks == ((20,), (4, 4, 4))
    xr.testing.assert_identical(out.compute(), ds.compute())


def test_chunks_that_do_not_tile_name_the_shuffle(dask_client):
    x = da.zeros((10, 10), chunks=5)
    with pytest.raises(shufflenode.InvalidArgument, match=r"shuffle rechunk-.*do not tile"):
        snd.rechunk(x, ((3, 3), (10,)))


def test_partitioned_result_and_input(sidecars):
    a = np.random.default_rng(3).normal(size=(12, 9))
    with sidecars.client() as c:
        res = shufflenode.rechunk_array(a, (5, 4), c)
        part = res.__partitioned__
        assert part["shape"] == (12, 9) and part["partition_tiling"] == (3, 3)
        p = part["partitions"][(1, 2)]
        assert p["start"] == (5, 8) and p["shape"] == (5, 1)
        assert p["location"][1] in sidecars.addrs
        np.testing.assert_array_equal(part["get"](p["data"]), a[5:10, 8:9])
        np.testing.assert_array_equal(res.to_numpy(), a)
        pickle.loads(pickle.dumps(part))
        again = shufflenode.rechunk_array(res, (12, 3), c)  # a __partitioned__ input
        np.testing.assert_array_equal(again.to_numpy(), a)
        x = shufflenode.from_partitioned(again)
        assert x.chunks == ((12,), (3, 3, 3))
        np.testing.assert_array_equal(x.compute(scheduler="sync"), a)
        locals_ = res.local_arrays()
        d = locals_[4].__distarray__()
        assert d["__version__"] == "0.10.0" and d["dim_data"][0]["start"] == 5
        y = shufflenode.from_distarray(locals_)
        np.testing.assert_array_equal(y.compute(scheduler="sync"), a)
        c.close(res.shuffle)
        c.close(again.shuffle)
