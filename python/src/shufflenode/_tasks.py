"""The tasks of shufflenode's Dask graphs: put, barrier (with replays) and read.

A graph of one shuffle has one put task per input partition (it puts the partition
to the sidecar beside the worker that runs it), one barrier task (it runs barrier
rounds and re-runs, through the distributed client, the input partitions the
service names) and one read task per output partition. The shuffle is created when
the graph is built (``create``); a put task that finds it missing (the build could
not reach a node, or an earlier compute of the graph closed it) creates it again.
Every read task reports its partition done to a ``ReadCounts`` (on the scheduler,
or in this process without distributed); the report that completes the set closes
the graph's shuffles.
"""

from __future__ import annotations

import contextlib
import dataclasses
import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from .client import Auth, Client, Endpoint, TaskRunner
from .errors import AlreadyExists, NotFound, ShufflenodeError
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
    created: bool = False  # the graph's build created it

    @property
    def id(self) -> str:
        """The shuffle ID."""
        return str(self.spec["id"])

    def chain(self) -> list[Plan]:
        """The shuffles to create for this one, in order (the one it shares ownership
        with first)."""
        return [*(self.after.chain() if self.after is not None else []), self]


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


def create(ctx: Ctx, plans: Sequence[Plan], rounds: int = 10) -> None:
    """Creates the shuffles in order (a co-partitioned one after the shuffle it shares
    ownership with), taking an existing one as created.

    Two creates of one ID at once may both fail and leave none: a put that then finds
    the shuffle missing creates it again (``put``).
    """
    for plan in plans:
        home = plan.after.id if plan.after is not None else plan.id
        with contextlib.suppress(AlreadyExists):
            ctx.client().create(plan.spec, rounds=rounds, home_of=home)


def build(ctx: Ctx, plans: Sequence[Plan]) -> list[Plan]:
    """Creates the shuffles of a graph while it is built, in one try; returns the plans,
    marked created when it worked. Any failure is left to the put tasks, which create
    the shuffle themselves and raise what stops them."""
    try:
        create(ctx, plans, rounds=1)
    except ShufflenodeError:
        return list(plans)
    made: dict[str, Plan] = {}
    for p in plans:
        after = made.get(p.after.id) if p.after is not None else None
        made[p.id] = dataclasses.replace(p, created=True, after=after or p.after)
    return [made[p.id] for p in plans]


#: How often a put creates its shuffle again when it finds it missing.
CREATE_TRIES = 5


def put(ctx: Ctx, plan: Plan, task: int, part: Any) -> int:
    """Put task: puts input partition task (attempts 0..999, then new ones); returns rows.

    The shuffle is created first when the graph's build did not, and again when the
    put finds it missing (closed by an earlier compute of the graph, or expired).
    """
    batches = plan.to_batches(part, task)
    if not plan.created:
        create(ctx, plan.chain())
    for i in range(CREATE_TRIES):
        try:
            ctx.client().put_task(plan.id, task, range(1000), plan.schema, batches,
                                  ctx.first_node(task), plan.dataframe)
            return sum(b.num_rows for b in batches)
        except NotFound:
            if i + 1 == CREATE_TRIES:
                raise
            time.sleep(random.uniform(0.0, 0.1 * 2**i))  # creates at once may undo each other
            create(ctx, plan.chain())
    raise AssertionError("unreachable")


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
    """Barrier task: barrier rounds with replays for every shuffle, then their endpoints.

    It opens the count of the graph's finished reads (again, after a compute that
    closed the shuffles), so the last read of this compute closes them.
    """
    del puts  # a dependency only: every put task ran
    replayed: dict[str, list[int]] = {}
    for plan, inp in zip(plans, inputs, strict=True):
        replayed[plan.id] = _settle(ctx, plan, inp)
    eps = {p.id: ctx.client().locations(p.id) for p in plans}
    _report(plans[0].id, "open")
    place_reads(read_keys, eps[plans[0].id])
    return Sealed(eps, {p.id: i for p, i in zip(plans, inputs, strict=True)}, replayed)


def _settle(ctx: Ctx, plan: Plan, inp: Inputs) -> list[int]:
    """Barrier rounds of plan's shuffle until sealed, creating it again (and so putting
    every task again) if it went missing; the tasks replayed."""
    r = _runner(ctx, plan, inp)
    try:
        r.settle([])
    except NotFound:
        create(ctx, plan.chain())
        r.settle([])
    return r.replayed


def recover(ctx: Ctx, plan: Plan, sealed: Sealed) -> Callable[[], None]:
    """The resume step of a read: barrier rounds that re-run replayed inputs."""
    return _runner(ctx, plan, sealed.inputs[plan.id]).recover


def read(ctx: Ctx, plan: Plan, sealed: Sealed, partition: int) -> pa.Table:
    """Reads one output partition, following it if its owner is lost.

    A shuffle found missing (a read run again after the graph's reads closed it) is
    created and settled again from the inputs, then read; it is then left to the
    nodes' idle expiry.
    """
    c = ctx.client()
    try:
        return c.read(plan.id, partition, sealed.endpoints[plan.id][partition],
                      recover(ctx, plan, sealed))
    except NotFound:
        _settle(ctx, plan, sealed.inputs[plan.id])
        return c.read(plan.id, partition, c.locations(plan.id)[partition],
                      recover(ctx, plan, sealed))


def read_done(ctx: Ctx, plans: Sequence[Plan], partition: int, total: int) -> bool:
    """Reports read task partition of a graph done; the report that completes the
    graph's total closes its shuffles (best effort: a close that fails leaves them to
    the nodes' idle expiry). Returns whether this one closed them."""
    if not _report(plans[0].id, "done", partition, total):
        return False
    for plan in reversed(plans):
        with contextlib.suppress(ShufflenodeError):
            ctx.client().close(plan.id)
    return True


class ReadCounts:
    """Which read tasks of each graph finished, by the graph's first shuffle ID.

    A graph's count opens at its barrier and closes once every read reported: a read
    that runs again later (Dask re-ran it) is not counted, until the next barrier of
    that graph opens the count again. Keeps at most ``keep`` graphs (oldest dropped).
    """

    def __init__(self, keep: int = 4096) -> None:
        self.keep = keep
        self._done: dict[str, set[int] | None] = {}
        self._lock = threading.Lock()

    def open(self, graph: str) -> bool:
        """Opens graph's count unless it is counting; returns whether it opened."""
        with self._lock:
            if self._done.get(graph) is not None:
                return False
            self._done.pop(graph, None)
            self._done[graph] = set()
            self._trim()
            return True

    def done(self, graph: str, partition: int, total: int) -> bool:
        """Counts partition's read; True for the one report that completes total."""
        with self._lock:
            seen = self._done.get(graph, set())
            if graph in self._done and seen is None:
                return False
            seen.add(partition)
            self._done[graph] = seen
            if len(seen) < total:
                self._trim()
                return False
            self._done[graph] = None
            return True

    def _trim(self) -> None:
        for g in list(self._done)[:max(0, len(self._done) - self.keep)]:
            del self._done[g]


_local_counts = ReadCounts()
_COUNTS = "shufflenode-reads"


def _report(graph: str, op: str, partition: int = 0, total: int = 0) -> bool:
    """Runs op ("open" or "done") on the scheduler's ReadCounts from a worker, or on
    this process's without distributed."""
    try:
        from distributed import get_client, get_worker

        get_worker()
    except (ImportError, ValueError):
        return _count(_local_counts, graph, op, partition, total)
    try:
        return bool(get_client().run_on_scheduler(_on_scheduler, graph=graph, op=op,
                                                  partition=partition, total=total))
    except (OSError, ValueError, RuntimeError):
        return False  # no count: the shuffle is left to the nodes' idle expiry


def _on_scheduler(dask_scheduler: Any, graph: str, op: str, partition: int, total: int) -> bool:
    counts = dask_scheduler.extensions.get(_COUNTS)
    if not isinstance(counts, ReadCounts):
        counts = dask_scheduler.extensions[_COUNTS] = ReadCounts()
    return _count(counts, graph, op, partition, total)


def _count(counts: ReadCounts, graph: str, op: str, partition: int, total: int) -> bool:
    return counts.open(graph) if op == "open" else counts.done(graph, partition, total)


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
