"""Array rechunks: chunk encoding (one Arrow row per chunk), specs, and chunk checks."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from .errors import InvalidArgument

Chunks = tuple[tuple[int, ...], ...]


def dtype_str(dtype: Any) -> str:
    """The NumPy dtype string the service speaks (``<f8``, ``|u1``, ...)."""
    return np.dtype(dtype).str


def array_schema(dtype: Any) -> pa.Schema:
    """The schema of a chunk's row: data (large_binary), shape (JSON string), dtype metadata."""
    return pa.schema([("data", pa.large_binary()), ("shape", pa.string())],
                     metadata={"dtype": dtype_str(dtype)})


def chunk_batch(chunk: np.ndarray) -> pa.RecordBatch:
    """One chunk as the one-row batch a put carries."""
    data = np.ascontiguousarray(chunk).tobytes()
    shape = json.dumps(list(chunk.shape), separators=(",", ":"))
    return pa.record_batch([pa.array([data], pa.large_binary()), pa.array([shape])],
                           schema=array_schema(chunk.dtype))


def chunk_from_table(table: pa.Table, dtype: np.dtype) -> np.ndarray:
    """The array of a read chunk (one row)."""
    if table.num_rows != 1:
        raise InvalidArgument(f"a chunk's stream has {table.num_rows} rows, not 1")
    shape = json.loads(table.column("shape")[0].as_py())
    buf = table.column("data")[0].as_buffer()
    meta = table.schema.metadata or {}
    sent = np.dtype(meta[b"dtype"].decode()) if b"dtype" in meta else dtype
    return np.frombuffer(buf, dtype=sent).reshape(shape).astype(dtype, copy=False)


def normalize_chunks(chunks: Any, shape: Sequence[int], dtype: Any,
                     shuffle: str | None = None) -> Chunks:
    """Dask's chunk forms (an int, a tuple per axis, tuples of sizes) as sizes per axis,
    checked to tile shape."""
    from dask.array.core import normalize_chunks as dnc

    try:
        out = dnc(chunks, tuple(shape), dtype=np.dtype(dtype))
    except ValueError as e:
        raise InvalidArgument(f"chunks {chunks!r} do not tile shape {tuple(shape)}: {e}",
                              shuffle=shuffle) from e
    check_tiling(out, shape, shuffle)
    return tuple(tuple(int(c) for c in axis) for axis in out)


def check_tiling(chunks: Sequence[Sequence[int]], shape: Sequence[int],
                 shuffle: str | None = None) -> None:
    """Raises InvalidArgument unless chunks has one axis per dimension summing to it."""
    if len(chunks) != len(shape):
        raise InvalidArgument(f"chunks have {len(chunks)} axes, the shape {tuple(shape)} has "
                              f"{len(shape)}", shuffle=shuffle)
    for ax, (c, n) in enumerate(zip(chunks, shape, strict=True)):
        if any(x < 0 for x in c) or sum(c) != n:
            raise InvalidArgument(f"chunks {tuple(c)} of axis {ax} do not tile its {n} elements",
                                  shuffle=shuffle)


def array_spec(sid: str, dtype: Any, old: Sequence[Sequence[int]],
               new: Sequence[Sequence[int]]) -> dict[str, Any]:
    """The create spec of a rechunk from old to new chunks."""
    check_tiling(new, [sum(c) for c in old], sid)
    return {"id": sid, "kind": "array", "dtype": dtype_str(dtype),
            "tasks": int(np.prod([len(c) for c in old])),
            "partitions": int(np.prod([len(c) for c in new])),
            "old_chunks": [list(map(int, c)) for c in old],
            "new_chunks": [list(map(int, c)) for c in new]}
