"""Dask DataFrame shuffle, merge and set_index, and Dask Array rechunk, through shufflenode.

Each call creates its shuffle on the nodes and builds a graph of n + m + 1 tasks
(n put tasks, one barrier task, m read tasks; see ``_tasks``) on top of the input's
graph, and returns a lazy Dask collection. The sidecars are found through
``SidecarPlugin`` on the workers of the default distributed client, or given as
``nodes``.

Shuffle IDs are new for every call. The last read task of a compute closes the
shuffle on the nodes; a graph whose reads do not all run (``head``, one partition)
leaves it to the nodes' idle expiry (``serve --idle-expiry``, default 1 h). Computing
the collection again creates the shuffle again.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Sequence
from typing import Any, Literal

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pyarrow as pa
from dask.base import tokenize

from . import _tasks as T
from .arrays import array_schema, array_spec, chunk_batch, chunk_from_table, normalize_chunks
from .client import Auth
from .errors import InvalidArgument, ShufflenodeError
from .frames import (
    conform,
    division_value,
    key_family,
    schema_of,
    serialize,
    to_batches,
    to_frame,
)

How = Literal["inner", "left", "right", "outer"]


def _ctx(nodes: Sequence[str] | None, auth: Auth | None) -> T.Ctx:
    if nodes:
        return T.Ctx(tuple(nodes), auth or Auth())
    try:
        from distributed import default_client
    except ImportError as e:
        raise ShufflenodeError("no nodes given and distributed is not installed") from e
    found = sorted({a for a in default_client().run(T._worker_sidecar).values() if a})
    if not found:
        raise ShufflenodeError("no nodes given and no worker has a shufflenode sidecar: "
                               "register SidecarPlugin on the cluster, or pass nodes=")
    return T.Ctx(tuple(found), auth or Auth())


def _new_id(kind: str, *args: Any) -> str:
    return f"{kind}-{tokenize(*args)[:12]}-{uuid.uuid4().hex[:8]}"


def _df_plan(sid: str, df: dd.DataFrame, rule: dict[str, Any], npartitions: int,
             keep_index: bool, after: T.Plan | None = None) -> T.Plan:
    schema = schema_of(df._meta, keep_index)
    spec: dict[str, Any] = {"id": sid, "kind": "dataframe", "tasks": df.npartitions,
                            "partitions": npartitions, "schema": serialize(schema), "rule": rule}
    if after is not None:
        spec["co_partition"] = after.id
    conv = functools.partial(_frame_batches, schema=schema, keep_index=keep_index, shuffle=sid)
    return T.Plan(spec, schema, conv, True, after)


def _frame_batches(part: pd.DataFrame, task: int, *, schema: pa.Schema, keep_index: bool,
                   shuffle: str) -> list[pa.RecordBatch]:
    del task
    return to_batches(part, schema, keep_index, shuffle)


def _puts(ctx: T.Ctx, plan: T.Plan, parts: Sequence[Any]) -> list[Any]:
    put = dask.delayed(T.put, pure=False)
    return [put(ctx, plan, i, p, dask_key_name=f"shufflenode-put-{plan.id}-{i}")
            for i, p in enumerate(parts)]


def _barrier(ctx: T.Ctx, plans: Sequence[T.Plan], parts: Sequence[Sequence[Any]],
             puts: Sequence[Any], nout: int, keys: Sequence[Any] | None = None) -> Any:
    name = plans[0].id
    keys = list(keys) if keys is not None else [f"shufflenode-read-{name}-{p}" for p in range(nout)]
    inputs = [T.Inputs(p) for p in parts]
    return dask.delayed(T.barrier, pure=False)(ctx, list(plans), inputs, keys, list(puts),
                                               dask_key_name=f"shufflenode-barrier-{name}")


def _read_keys(plan: T.Plan, nout: int) -> list[str]:
    return [f"shufflenode-read-{plan.id}-{p}" for p in range(nout)]


def shuffle(df: dd.DataFrame, on: str | Sequence[str], npartitions: int | None = None,
            nodes: Sequence[str] | None = None, auth: Auth | None = None) -> dd.DataFrame:
    """Rows of df with equal ``on`` values in one partition (the service's hash rule).

    The index is kept; output divisions are unknown; a partition's rows come in input
    partition order.
    """
    cols = [on] if isinstance(on, str) else list(on)
    _check_columns(df, cols, "shuffle")
    nout = npartitions or df.npartitions
    ctx = _ctx(nodes, auth)
    (plan,) = T.build(ctx, [_df_plan(_new_id("shuffle", df._name, cols, nout), df,
                                     {"kind": "hash", "columns": cols}, nout, True)])
    parts = df.to_delayed()
    b = _barrier(ctx, [plan], [parts], _puts(ctx, plan, parts), nout)
    read = dask.delayed(_read_frame, pure=False)
    outs = [read(ctx, plan, b, p, nout, df._meta, dask_key_name=k)
            for p, k in enumerate(_read_keys(plan, nout))]
    return _collection(outs, df._meta, [None] * (nout + 1))


def _read_frame(ctx: T.Ctx, plan: T.Plan, sealed: T.Sealed, p: int, nout: int,
                meta: pd.DataFrame) -> pd.DataFrame:
    table = T.read(ctx, plan, sealed, p)
    T.read_done(ctx, [plan], p, nout)
    return to_frame(table, meta, True)


def _check_columns(df: dd.DataFrame, cols: Sequence[str], what: str) -> None:
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise InvalidArgument(f"{what}: no column {missing} (columns: {list(df.columns)})")


def merge(left: dd.DataFrame, right: dd.DataFrame, how: How = "inner",
          on: str | Sequence[str] | None = None, left_on: str | Sequence[str] | None = None,
          right_on: str | Sequence[str] | None = None, npartitions: int | None = None,
          suffixes: tuple[str, str] = ("_x", "_y"), nodes: Sequence[str] | None = None,
          auth: Auth | None = None) -> dd.DataFrame:
    """pandas' ``left.merge(right, ...)`` as a Dask DataFrame: both sides hash-shuffled
    into co-partitioned shuffles, partition p of each joined in pandas beside its owner.

    Key columns must hash alike (integers with integers, floats with floats, strings
    with strings, equal timestamp types), or InvalidArgument names the shuffle.
    """
    lk, rk = _merge_keys(on, left_on, right_on)
    _check_columns(left, lk, "merge (left)")
    _check_columns(right, rk, "merge (right)")
    nout = npartitions or max(left.npartitions, right.npartitions)
    ctx = _ctx(nodes, auth)
    sid = _new_id("merge", left._name, right._name, lk, rk, how, nout)
    _check_key_types(left, right, lk, rk, sid)
    lp = _df_plan(f"{sid}-l", left, {"kind": "hash", "columns": lk}, nout, False)
    rp = _df_plan(f"{sid}-r", right, {"kind": "hash", "columns": rk}, nout, False, lp)
    lp, rp = T.build(ctx, [lp, rp])
    lparts, rparts = left.to_delayed(), right.to_delayed()
    puts = _puts(ctx, lp, lparts) + _puts(ctx, rp, rparts)
    b = _barrier(ctx, [lp, rp], [lparts, rparts], puts, nout)
    kw = {"how": how, "left_on": lk, "right_on": rk, "suffixes": suffixes}
    meta = _merge_meta(left._meta_nonempty, right._meta_nonempty, kw)
    read = dask.delayed(_read_merge, pure=False)
    metas = (left._meta, right._meta, meta)
    outs = [read(ctx, lp, rp, b, p, nout, metas, kw, dask_key_name=k)
            for p, k in enumerate(_read_keys(lp, nout))]
    return _collection(outs, meta, [None] * (nout + 1))


def _collection(outs: Sequence[Any], meta: pd.DataFrame, divisions: Sequence[Any]) -> dd.DataFrame:
    """A Dask DataFrame of the read tasks, their frames as they are (Dask's string
    conversion of object columns would turn a nullable bool column into strings)."""
    with dask.config.set({"dataframe.convert-string": False}):
        return dd.from_delayed(list(outs), meta=meta, divisions=list(divisions),
                               verify_meta=False)


def _merge_meta(lne: pd.DataFrame, rne: pd.DataFrame, kw: dict[str, Any]) -> pd.DataFrame:
    """The result's empty frame with the dtypes pandas gives when some rows find no match
    (a left join's right columns become nullable: int to float, bool to object)."""
    how = kw["how"]
    args = {k: v for k, v in kw.items() if k != "how"}
    metas = [lne.merge(rne, how="inner", **args)]
    if how in ("left", "outer"):
        metas.append(lne.merge(rne.iloc[:0], how="left", **args))
    if how in ("right", "outer"):
        metas.append(lne.iloc[:0].merge(rne, how="right", **args))
    cols = metas[0].columns
    out = metas[-1] if len(metas) <= 2 else pd.concat([m[cols] for m in metas[1:]])
    return out[cols].iloc[:0]


def _merge_keys(on: Any, left_on: Any, right_on: Any) -> tuple[list[str], list[str]]:
    def as_list(x: Any) -> list[str]:
        return [x] if isinstance(x, str) else list(x)

    if on is not None:
        return as_list(on), as_list(on)
    if left_on is None or right_on is None:
        raise InvalidArgument("merge: give on, or left_on and right_on")
    lk, rk = as_list(left_on), as_list(right_on)
    if len(lk) != len(rk):
        raise InvalidArgument(f"merge: left_on {lk} and right_on {rk} differ in length")
    return lk, rk


def _check_key_types(left: dd.DataFrame, right: dd.DataFrame, lk: Sequence[str],
                     rk: Sequence[str], sid: str) -> None:
    ls, rs = schema_of(left._meta, False), schema_of(right._meta, False)
    for a, b in zip(lk, rk, strict=True):
        ta, tb = ls.field(a).type, rs.field(b).type
        if key_family(ta) != key_family(tb):
            raise InvalidArgument(f"merge keys {a!r} ({ta}) and {b!r} ({tb}) do not hash alike: "
                                  "cast one side first", shuffle=sid)


def _read_merge(ctx: T.Ctx, lp: T.Plan, rp: T.Plan, sealed: T.Sealed, p: int, nout: int,
                metas: tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame],
                kw: dict[str, Any]) -> pd.DataFrame:
    lmeta, rmeta, meta = metas
    lt, rt = T.read(ctx, lp, sealed, p), T.read(ctx, rp, sealed, p)
    T.read_done(ctx, [lp, rp], p, nout)
    left, right = to_frame(lt, lmeta, False), to_frame(rt, rmeta, False)
    return conform(left.merge(right, **kw), meta)


def set_index(df: dd.DataFrame, column: str, npartitions: int | None = None,
              divisions: Sequence[Any] | None = None, nodes: Sequence[str] | None = None,
              auth: Auth | None = None) -> dd.DataFrame:
    """df indexed and sorted by column (nulls last), with known divisions.

    With ``divisions`` (Dask's form: P+1 ascending values), rows go by them; else
    ``npartitions`` (default df's) ranges are chosen from sampled quantiles.
    """
    _check_columns(df, [column], "set_index")
    ctx = _ctx(nodes, auth)
    divs = list(divisions) if divisions is not None else _quantiles(df, column,
                                                                     npartitions or df.npartitions)
    nout = len(divs) - 1
    sid = _new_id("setindex", df._name, column, divs)
    typ = schema_of(df._meta, False).field(column).type
    rule = {"kind": "range", "columns": [column],
            "divisions": [division_value(d, typ) for d in divs[1:-1]]}
    (plan,) = T.build(ctx, [_df_plan(sid, df, rule, nout, False)])
    parts = df.to_delayed()
    b = _barrier(ctx, [plan], [parts], _puts(ctx, plan, parts), nout)
    meta = df._meta.set_index(column)
    read = dask.delayed(_read_sorted, pure=False)
    outs = [read(ctx, plan, b, p, nout, df._meta, column, dask_key_name=k)
            for p, k in enumerate(_read_keys(plan, nout))]
    return _collection(outs, meta, divs)


def _read_sorted(ctx: T.Ctx, plan: T.Plan, sealed: T.Sealed, p: int, nout: int,
                 meta: pd.DataFrame, column: str) -> pd.DataFrame:
    table = T.read(ctx, plan, sealed, p)
    T.read_done(ctx, [plan], p, nout)
    df = to_frame(table, meta, False)
    return df.sort_values(column, kind="stable", na_position="last").set_index(column)


def _quantiles(df: dd.DataFrame, column: str, n: int) -> list[Any]:
    """n+1 ascending divisions from evenly spaced samples of every partition."""
    sample = df[column].map_partitions(_sample, 4 * n + 2, meta=df._meta[column]).compute()
    values = np.sort(sample.dropna().to_numpy())
    if len(values) == 0:
        raise InvalidArgument(f"set_index: column {column!r} has no non-null value")
    picks = values[np.linspace(0, len(values) - 1, n + 1).round().astype(int)]
    divs = list(pd.unique(picks))
    return divs if len(divs) > 1 else [divs[0], divs[0]]


def _sample(s: pd.Series, k: int) -> pd.Series:
    s = s.dropna().sort_values()
    if len(s) <= k:
        return s
    return s.iloc[np.linspace(0, len(s) - 1, k).round().astype(int)]


# arrays


def rechunk(x: Any, chunks: Any, nodes: Sequence[str] | None = None,
            auth: Auth | None = None) -> Any:
    """x (a dask array) rechunked to chunks through the service: one put task per old
    chunk, one barrier task, one read task per new chunk (the last read closes the
    shuffle)."""
    import dask.array as da
    from dask.highlevelgraph import HighLevelGraph

    sid = _new_id("rechunk", x.name, repr(chunks))
    new = normalize_chunks(chunks, x.shape, x.dtype, sid)
    ctx = _ctx(nodes, auth)
    spec = array_spec(sid, x.dtype, x.chunks, new)
    (plan,) = T.build(ctx, [T.Plan(spec, array_schema(x.dtype),
                                   functools.partial(_array_batches, dtype=np.dtype(x.dtype)),
                                   False)])
    parts = list(np.asarray(x.to_delayed(), dtype=object).ravel())
    grid = [len(c) for c in new]
    name = f"shufflenode-rechunked-{sid}"
    keys = [(name, *map(int, np.unravel_index(p, grid))) for p in range(spec["partitions"])]
    nout = spec["partitions"]
    b = _barrier(ctx, [plan], [parts], _puts(ctx, plan, parts), nout, keys)
    read = dask.delayed(_read_chunk, pure=False)
    reads = [read(ctx, plan, b, p, nout, x.dtype, dask_key_name=k) for p, k in enumerate(keys)]
    layer = dict(HighLevelGraph.merge(*(r.dask for r in reads)))
    hlg = HighLevelGraph({name: layer}, {name: set()})
    return da.Array(hlg, name, new, dtype=x.dtype, meta=np.empty((0,) * x.ndim, dtype=x.dtype))


def _array_batches(chunk: np.ndarray, task: int, *, dtype: np.dtype) -> list[pa.RecordBatch]:
    del task
    return [chunk_batch(np.asarray(chunk, dtype=dtype))]


def _read_chunk(ctx: T.Ctx, plan: T.Plan, sealed: T.Sealed, p: int, nout: int,
                dtype: Any) -> np.ndarray:
    table = T.read(ctx, plan, sealed, p)
    T.read_done(ctx, [plan], p, nout)
    return chunk_from_table(table, np.dtype(dtype))


def rechunk_dataset(ds: Any, chunks: dict[str, int | Sequence[int]],
                    nodes: Sequence[str] | None = None, auth: Auth | None = None) -> Any:
    """An xarray Dataset whose dask-backed variables are rechunked through the service.

    ``chunks`` maps dimension names to new chunk sizes; dimensions not named keep theirs.
    """
    out = ds.copy()
    for name, var in ds.variables.items():
        data = var.data
        if not hasattr(data, "dask") or not any(d in chunks for d in var.dims):
            continue
        want = tuple(chunks.get(d, c) for d, c in zip(var.dims, data.chunks, strict=True))
        out[name] = var.copy(data=rechunk(data, want, nodes, auth))
    return out
