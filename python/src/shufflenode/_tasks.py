"""The tasks of shufflenode's Dask graphs: put, barrier (with replays) and read.

A graph of one shuffle has a create task, one put task per input partition (it puts the
partition to the sidecar beside the worker that runs it), one barrier task (it
runs barrier rounds and re-runs, through the distributed client, the input
partitions the service names) and one read task per output partition.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from .client import Auth, Client, Endpoint, TaskRunner
from .errors import AlreadyExists, ShufflenodeError
from .plugin import local_sidecar, worker_plugin

_lock = threading.Lock()
_clients: dict[tuple[tuple[str, ...], Auth], Client] = {}


@dataclass(frozen=True)
class Ctx:
    """The sidecars a graph's tasks use (in this order for every task) and their auth."""

    nodes: tuple[str, ...]
    auth: Auth = Auth()

    def client(self) -> Client:
        """This process's Client of the nodes (cached), with the worker plugin's auth when
        the graph carries none."""
        auth = self.auth
        plugin = worker_plugin()
        if auth == Auth() and plugin is not None:
            auth = plugin.auth
        with _lock:
            key = (self.nodes, auth)
            if key not in _clients:
                _clients[key] = Client(list(self.nodes), auth)
            return _clients[key]

    def first_node(self, task: int) -> int:
        """Index of the node to put task on first: the worker's own sidecar if known."""
        local, _ = local_sidecar()
        return self.nodes.index(local) if local in self.nodes else task


@dataclass(frozen=True)
class Plan:
    """One shuffle of a graph: its spec, input schema and how partitions become batches."""

    spec: dict[str, Any]
    schema: pa.Schema
    to_batches: Callable[[Any, int], Sequence[pa.RecordBatch]]
    dataframe: bool = True
    after: Plan | None = None  # a shuffle to create first (co_partition)

    @property
    def id(self) -> str:
        """The shuffle ID."""
        return str(self.spec["id"])


class Inputs:
    """The input partitions of a shuffle as Dask objects, to re-run replayed tasks.

    Not a Dask collection (so a task holding it does not depend on the inputs).
    """

    def __init__(self, parts: Sequence[Any]) -> None:
        self.parts = list(parts)

    def compute(self, task: int) -> Any:
        """Input partition task, computed on the cluster (or here without one)."""
        try:
            from distributed import worker_client

            with worker_client() as c:
                return c.compute(self.parts[task]).result()
        except (ImportError, ValueError):
            return self.parts[task].compute(scheduler="sync")


def create(ctx: Ctx, plans: Sequence[Plan]) -> list[str]:
    """Create task: creates the shuffles in order (a co-partitioned one after the shuffle
    it shares ownership with), taking an existing one as created.

    One task creates them: two creates of one ID at once may undo each other on the nodes.
    """
    for plan in plans:
        home = plan.after.id if plan.after is not None else plan.id
        try:
            ctx.client().create(plan.spec, home_of=home)
        except AlreadyExists:
            pass
    return [p.id for p in plans]


def put(ctx: Ctx, plan: Plan, task: int, part: Any, created: Sequence[str]) -> int:
    """Put task: puts input partition task (attempts 0..999, then new ones); returns rows."""
    del created  # a dependency only: the create task ran
    batches = plan.to_batches(part, task)
    ctx.client().put_task(plan.id, task, range(1000), plan.schema, batches,
                          ctx.first_node(task), plan.dataframe)
    return sum(b.num_rows for b in batches)


@dataclass
class Sealed:
    """What the barrier task hands to the read tasks."""

    endpoints: dict[str, list[Endpoint]]
    inputs: dict[str, Inputs]
    replayed: dict[str, list[int]] = field(default_factory=dict)


def _runner(ctx: Ctx, plan: Plan, inputs: Inputs) -> TaskRunner:
    def input_fn(t: int) -> Sequence[pa.RecordBatch]:
        return plan.to_batches(inputs.compute(t), t)

    return TaskRunner(ctx.client(), plan.id, plan.schema, input_fn, plan.dataframe,
                      parallel=4, put_on=ctx.first_node, round=1)


def barrier(ctx: Ctx, plans: Sequence[Plan], inputs: Sequence[Inputs],
            read_keys: Sequence[Any], puts: Sequence[int]) -> Sealed:
    """Barrier task: barrier rounds with replays for every shuffle, then their endpoints."""
    del puts  # a dependency only: every put task ran
    replayed: dict[str, list[int]] = {}
    for plan, inp in zip(plans, inputs, strict=True):
        r = _runner(ctx, plan, inp)
        r.settle([])
        replayed[plan.id] = r.replayed
    eps = {p.id: ctx.client().locations(p.id) for p in plans}
    place_reads(read_keys, eps[plans[0].id])
    return Sealed(eps, {p.id: i for p, i in zip(plans, inputs, strict=True)}, replayed)


def recover(ctx: Ctx, plan: Plan, sealed: Sealed) -> Callable[[], None]:
    """The resume step of a read: barrier rounds that re-run replayed inputs."""
    return _runner(ctx, plan, sealed.inputs[plan.id]).recover


def read(ctx: Ctx, plan: Plan, sealed: Sealed, partition: int) -> pa.Table:
    """Reads one output partition, following it if its owner is lost."""
    eps = sealed.endpoints[plan.id]
    return ctx.client().read(plan.id, partition, eps[partition], recover(ctx, plan, sealed))


def place_reads(read_keys: Sequence[Any], eps: Sequence[Endpoint]) -> None:
    """Best effort: asks the scheduler to run read task p beside the owner of partition p."""
    if not read_keys:
        return
    try:
        from distributed import worker_client

        with worker_client() as c:
            by_sidecar: dict[str, list[str]] = {}
            for w, addr in c.run(_worker_sidecar).items():
                by_sidecar.setdefault(addr, []).append(w)
            where = {k: by_sidecar.get(e.addr, []) for k, e in zip(read_keys, eps, strict=False)}
            c.run_on_scheduler(_restrict, where={k: v for k, v in where.items() if v})
    except (ImportError, ValueError, OSError, ShufflenodeError):
        return


def _worker_sidecar(dask_worker: Any) -> str:
    plugin = dask_worker.plugins.get("shufflenode-sidecar")
    return str(plugin.addr) if plugin is not None else ""


def _restrict(dask_scheduler: Any, where: dict[Any, list[str]]) -> int:
    n = 0
    for key, workers in where.items():
        ts = dask_scheduler.tasks.get(key)
        if ts is not None and ts.state in ("released", "waiting"):
            ts.worker_restrictions = set(workers)
            ts.loose_restrictions = True
            n += 1
    return n


def wait_for(cond: Callable[[], bool], timeout: float) -> bool:
    """Polls cond until it holds or timeout passes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.05)
    return False
