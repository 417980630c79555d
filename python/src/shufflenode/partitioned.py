"""The seeds' array protocols: ``__partitioned__`` results and inputs, DAP ``__distarray__``.

``rechunk_array(obj, chunks, client)`` rechunks a NumPy array, an object exposing
``__partitioned__``, or a sequence of DAP local arrays through the service and
returns a ``PartitionedArray`` whose ``__partitioned__`` names each new chunk's owner
and reads it with ``get``. ``from_partitioned`` makes a Dask array of any
``__partitioned__`` object, ``from_distarray`` of block-distributed DAP local arrays.
"""

from __future__ import annotations

import itertools
import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .arrays import array_schema, array_spec, chunk_batch, chunk_from_table, normalize_chunks
from .client import Auth, Client, Endpoint
from .errors import InvalidArgument

DAP_VERSION = "0.10.0"


@dataclass(frozen=True)
class Getter:
    """The ``get`` of a PartitionedArray: reads chunks (by their DoGet tickets) from the
    nodes. Picklable."""

    nodes: tuple[str, ...]
    auth: Auth
    dtype: str

    def __call__(self, handles: Any) -> Any:
        if isinstance(handles, dict):
            return self._one(handles)
        return [self._one(h) for h in handles]

    def _one(self, h: dict[str, Any]) -> np.ndarray:
        with Client(list(self.nodes), self.auth) as c:
            eps = c.locations(h["shuffle"])
            table = c.read(h["shuffle"], int(h["partition"]), eps[int(h["partition"])])
        return chunk_from_table(table, np.dtype(self.dtype))


class PartitionedArray:
    """A rechunk's result held by the nodes, exposing ``__partitioned__`` (seed 000)."""

    def __init__(self, shuffle: str, layout: dict[str, Any], getter: Getter) -> None:
        self.shuffle, self._layout, self._get = shuffle, layout, getter
        self.shape = tuple(int(s) for s in layout["shape"])
        self.dtype = np.dtype(getter.dtype)

    @property
    def __partitioned__(self) -> dict[str, Any]:
        parts = {}
        for key, p in self._layout["partitions"].items():
            pos = tuple(int(i) for i in key.split(","))
            parts[pos] = {"start": tuple(p["start"]), "shape": tuple(p["shape"]),
                          "data": p["data"], "location": tuple(p["location"])}
        return {"shape": self.shape, "partition_tiling": tuple(self._layout["partition_tiling"]),
                "partitions": parts, "get": self._get}

    def to_numpy(self) -> np.ndarray:
        """The whole array, read from the owners."""
        out = np.empty(self.shape, self.dtype)
        for p in self.__partitioned__["partitions"].values():
            sl = tuple(slice(s, s + n) for s, n in zip(p["start"], p["shape"], strict=True))
            out[sl] = self._get(p["data"])
        return out

    def local_arrays(self) -> list[LocalArray]:
        """Every new chunk as a DAP local array (block distribution on every axis)."""
        tiling = self.__partitioned__["partition_tiling"]
        out = []
        for pos, p in sorted(self.__partitioned__["partitions"].items()):
            dims = [{"dist_type": "b", "size": n, "proc_grid_size": g, "proc_grid_rank": r,
                     "start": s, "stop": s + k}
                    for n, g, r, s, k in zip(self.shape, tiling, pos, p["start"], p["shape"],
                                             strict=True)]
            out.append(LocalArray(self._get(p["data"]), tuple(dims)))
        return out


@dataclass
class LocalArray:
    """One process's local array of a distributed array (DAP, seed 002)."""

    buffer: np.ndarray
    dim_data: tuple[dict[str, Any], ...]

    def __distarray__(self) -> dict[str, Any]:
        return {"__version__": DAP_VERSION, "buffer": self.buffer, "dim_data": self.dim_data}


def _grid_chunks(part: dict[str, Any]) -> tuple[tuple[int, ...], ...]:
    """Chunk sizes per axis of a ``__partitioned__`` dict (a regular grid of rectangles)."""
    tiling, parts = part["partition_tiling"], part["partitions"]
    chunks = []
    for ax, g in enumerate(tiling):
        sizes = []
        for i in range(g):
            pos = tuple(i if a == ax else 0 for a in range(len(tiling)))
            sizes.append(int(parts[pos]["shape"][ax]))
        chunks.append(tuple(sizes))
    return tuple(chunks)


def from_partitioned(obj: Any) -> Any:
    """A Dask array of an object exposing ``__partitioned__`` (each chunk read by its ``get``)."""
    import dask
    import dask.array as da

    part = obj.__partitioned__
    chunks = _grid_chunks(part)
    get, parts = part["get"], part["partitions"]
    first = get(parts[tuple(0 for _ in chunks)]["data"])
    dtype = np.asarray(first).dtype
    blocks = np.empty(tuple(len(c) for c in chunks), dtype=object)
    for pos in itertools.product(*(range(len(c)) for c in chunks)):
        shape = tuple(c[i] for c, i in zip(chunks, pos, strict=True))
        d = dask.delayed(get, pure=True)(parts[pos]["data"])
        blocks[pos] = da.from_delayed(d, shape, dtype=dtype)
    return da.block(blocks.tolist()) if blocks.ndim else blocks[()]


def from_distarray(locals_: Sequence[Any]) -> Any:
    """A Dask array of DAP local arrays with block distributions without padding."""
    import dask.array as da

    items = [o.__distarray__() for o in locals_]
    ndim = len(items[0]["dim_data"])
    grid = [int(items[0]["dim_data"][a]["proc_grid_size"]) for a in range(ndim)]
    blocks = np.empty(grid, dtype=object)
    for it in items:
        dims = it["dim_data"]
        if any(d.get("dist_type", "b") != "b" or any(d.get("padding", (0, 0))) for d in dims):
            raise InvalidArgument("from_distarray takes block distributions without padding")
        blocks[tuple(int(d["proc_grid_rank"]) for d in dims)] = da.from_array(np.asarray(it["buffer"]))
    if any(b is None for b in blocks.ravel()):
        raise InvalidArgument("from_distarray: the local arrays do not cover the process grid")
    return da.block(blocks.tolist())


def _input_chunks(obj: Any) -> tuple[Any, tuple[tuple[int, ...], ...], list[Any]]:
    """(dtype, chunks, getters of old chunks in C order) of a rechunk's input."""
    if hasattr(obj, "__partitioned__"):
        part = obj.__partitioned__
        chunks = _grid_chunks(part)
        positions = itertools.product(*(range(len(c)) for c in chunks))
        handles = [part["partitions"][p]["data"] for p in positions]
        first = np.asarray(part["get"](handles[0]))
        return first.dtype, chunks, [lambda h=h: np.asarray(part["get"](h)) for h in handles]
    arr = np.asarray(obj)
    return arr.dtype, tuple((n,) for n in arr.shape), [lambda: arr]


def rechunk_array(obj: Any, chunks: Any, client: Client) -> PartitionedArray:
    """Rechunks obj (a NumPy array or a ``__partitioned__`` object) through the nodes of
    client; the result stays on the nodes until ``client.close(result.shuffle)``."""
    dtype, old, getters = _input_chunks(obj)
    sid = f"rechunk-{uuid.uuid4().hex[:12]}"
    new = normalize_chunks(chunks, [sum(c) for c in old], dtype, sid)
    spec = array_spec(sid, dtype, old, new)
    client.run(spec, array_schema(dtype), lambda t: [chunk_batch(getters[t]())])
    layout = client.layout(sid)
    return PartitionedArray(sid, layout, Getter(tuple(client.nodes), client.auth, np.dtype(dtype).str))


def endpoint_of(handle: dict[str, Any], addr: str) -> Endpoint:
    """The Endpoint of a ``__partitioned__`` handle whose owner's API is addr."""
    return Endpoint(int(handle["partition"]), json.dumps(handle).encode(), addr)
