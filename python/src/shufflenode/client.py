"""A client of shufflenode's Flight API (docs/flight-api.md) on pyarrow.flight.

``Client`` speaks to the nodes of one cluster: it creates a shuffle on its home
node (chosen from the shuffle ID, as the Go client does), puts input tasks as
attempts, runs barrier rounds with replays, finds and reads output partitions
(following a partition that moved after a lost node) and closes the shuffle.
``Client.run`` does a whole shuffle given a function that produces input task i; it
puts small dataframe tasks several to a DoPut stream on nodes that take it (revision 4).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.flight as flight

from ._puttasks import MIN_PUT_TASKS_REVISION, TaskOutcome, TaskPut, TaskStream, check_tasks
from .errors import (
    AlreadyExists,
    Internal,
    InvalidArgument,
    ShufflenodeError,
    Unavailable,
    Unimplemented,
    from_flight,
    retryable,
)

PROTOCOL_VERSION = 1
# What pyarrow raises for a failed call (Flight errors, Arrow status errors, OS errors).
_FLIGHT_ERRORS = (flight.FlightError, pa.ArrowException, OSError)
MAX_MESSAGE_BYTES = 256 << 20

#: An input function: the record batches of input task i (the same rows on every call).
Input = Callable[[int], Sequence[pa.RecordBatch]]


@dataclass(frozen=True)
class Auth:
    """TLS settings and bearer token of the nodes' API (zero value: plaintext, no token)."""

    token: str = ""
    tls: bool = False
    ca_file: str = ""
    cert_file: str = ""
    key_file: str = ""
    server_name: str = ""

    def uses_tls(self) -> bool:
        """TLS is on when asked, or implied by a CA or client certificate."""
        return self.tls or bool(self.ca_file or self.cert_file)


def _read(path: str) -> bytes | None:
    if not path:
        return None
    with open(path, "rb") as f:
        return f.read()


def fnv32a(s: str) -> int:
    """FNV-1a 32-bit hash of s (the Go client's choice of a shuffle's home node)."""
    h = 0x811C9DC5
    for b in s.encode():
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


@dataclass
class Endpoint:
    """Where output partition ``partition`` of a shuffle is read."""

    partition: int
    ticket: bytes
    addr: str


def _addr_of(uri: str | bytes) -> str:
    text = uri.decode() if isinstance(uri, bytes) else uri
    return text.split("://", 1)[-1]


class Client:
    """Connections to the API addresses (``host:port``) of the nodes of one cluster.

    Thread-safe: puts and reads of many tasks may run at once.
    """

    def __init__(self, nodes: str | Sequence[str], auth: Auth | None = None,
                 timeout: float | None = None) -> None:
        self.nodes: list[str] = [nodes] if isinstance(nodes, str) else list(nodes)
        if not self.nodes:
            raise ValueError("shufflenode: a Client needs at least one node address")
        self.auth = auth or Auth()
        self.timeout = timeout
        self._conns: dict[str, flight.FlightClient] = {}
        self._lock = threading.Lock()
        self._avoid: dict[str, float] = {}
        self._revisions: dict[str, int] = {}

    # connections

    def _options(self) -> flight.FlightCallOptions:
        headers = [(b"authorization", f"Bearer {self.auth.token}".encode())] if self.auth.token else []
        return flight.FlightCallOptions(headers=headers, timeout=self.timeout)

    def conn(self, addr: str) -> flight.FlightClient:
        """The (cached) Flight connection to the node at addr."""
        with self._lock:
            fc = self._conns.get(addr)
            if fc is None:
                fc = self._conns[addr] = self._dial(addr)
            return fc

    def _dial(self, addr: str) -> flight.FlightClient:
        a = self.auth
        scheme = "grpc+tls" if a.uses_tls() else "grpc+tcp"
        opts = [("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                ("grpc.max_send_message_length", MAX_MESSAGE_BYTES)]
        kw: dict[str, Any] = {"generic_options": opts}
        if a.uses_tls():
            kw.update(tls_root_certs=_read(a.ca_file), cert_chain=_read(a.cert_file),
                      private_key=_read(a.key_file), override_hostname=a.server_name or None)
        return flight.FlightClient(f"{scheme}://{addr}", **kw)

    def close_connections(self) -> None:
        """Closes every connection (the Client may dial again later)."""
        with self._lock:
            conns, self._conns = self._conns, {}
        for fc in conns.values():
            fc.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close_connections()

    # actions

    def action(self, addr: str, typ: str, body: Any, shuffle: str | None = None) -> Any:
        """Runs action typ on the node at addr; returns its decoded JSON reply or None."""
        out = None
        try:
            for r in self.conn(addr).do_action(flight.Action(typ, json.dumps(body).encode()),
                                               self._options()):
                out = json.loads(r.body.to_pybytes()) if r.body.size else out
        except _FLIGHT_ERRORS as e:
            raise from_flight(e, shuffle=shuffle, node=addr) from e
        return out

    def home(self, shuffle: str) -> int:
        """Index in nodes of the node that creates shuffle (its first coordinator)."""
        return fnv32a(shuffle) % len(self.nodes)

    def ask(self, shuffle: str, typ: str, body: Any, home_of: str | None = None) -> Any:
        """Runs an action on shuffle's home node (or home_of's), then the next ones while
        unreachable."""
        first, err = self.home(home_of or shuffle), None
        for i in range(len(self.nodes)):
            try:
                return self.action(self.nodes[(first + i) % len(self.nodes)], typ, body, shuffle)
            except Unavailable as e:
                err = e
        assert err is not None
        raise err

    def check(self, addr: str | None = None) -> str:
        """Checks that a node answers (and takes the token); returns its name."""
        rep = self.action(addr or self.nodes[0], "members", {})
        return str(rep.get("node", "")) if isinstance(rep, dict) else ""

    def revision(self, addr: str | None = None) -> int:
        """The protocol revision of the node at addr (default: the first), from its members
        reply (0 before revision 2); asked once, again after a put there failed retryably."""
        addr = addr or self.nodes[0]
        with self._lock:
            rev = self._revisions.get(addr)
        if rev is None:
            rep = self.action(addr, "members", {})
            rev = int(rep.get("revision", 0)) if isinstance(rep, dict) else 0
            with self._lock:
                self._revisions[addr] = rev
        return rev

    def takes_tasks(self, addr: str) -> bool:
        """Whether the node at addr takes puts of several tasks (revision 4 on); False
        when it cannot be asked."""
        try:
            return self.revision(addr) >= MIN_PUT_TASKS_REVISION
        except ShufflenodeError:
            return False

    def members(self, addr: str | None = None) -> list[dict[str, Any]]:
        """The live members as the node at addr (default: the first) sees them."""
        rep = self.action(addr or self.nodes[0], "members", {})
        return rep["members"] if isinstance(rep, dict) else list(rep or [])

    def create(self, spec: dict[str, Any], rounds: int = 10,
               home_of: str | None = None) -> dict[str, Any]:
        """Creates the shuffle of spec on its home node (then the next ones while unreachable).

        ``home_of`` names another shuffle whose home takes the create: a ``co_partition``
        create must go to the node that holds the shuffle it shares ownership with.
        """
        spec = {"version": PROTOCOL_VERSION, **spec}
        err: ShufflenodeError | None = None
        for r in range(rounds):
            if r:
                time.sleep(min(0.05 * 2**r, 2.0))
            try:
                return self.ask(spec["id"], "create", spec, home_of)
            except Unavailable as e:
                err = e
        assert err is not None
        raise err

    def barrier(self, shuffle: str) -> dict[str, Any]:
        """One barrier: ``{"sealed", "replay", "epoch", "replay_set"}``."""
        rep = self.ask(shuffle, "barrier", {"shuffle": shuffle})
        rep.setdefault("replay", [])
        return rep

    def status(self, shuffle: str) -> dict[str, Any]:
        """The home node's view of the shuffle."""
        return self.ask(shuffle, "status", {"shuffle": shuffle})

    def layout(self, shuffle: str) -> dict[str, Any]:
        """The ``__partitioned__`` layout of a sealed array shuffle."""
        return self.ask(shuffle, "layout", {"shuffle": shuffle})

    def close(self, shuffle: str) -> None:
        """Frees the shuffle on every member (closing an unknown shuffle succeeds)."""
        self.ask(shuffle, "close", {"shuffle": shuffle})

    def locations(self, shuffle: str) -> list[Endpoint]:
        """One endpoint per output partition, in partition order (GetFlightInfo)."""
        desc = flight.FlightDescriptor.for_command(json.dumps({"shuffle": shuffle}).encode())
        first, err = self.home(shuffle), None
        for i in range(len(self.nodes)):
            addr = self.nodes[(first + i) % len(self.nodes)]
            try:
                info = self.conn(addr).get_flight_info(desc, self._options())
                return [Endpoint(p, e.ticket.ticket, _addr_of(e.locations[0].uri))
                        for p, e in enumerate(info.endpoints)]
            except _FLIGHT_ERRORS as e:
                err = from_flight(e, shuffle=shuffle, node=addr)
                if not isinstance(err, Unavailable):
                    raise err from e
        assert err is not None
        raise err

    # puts

    def put(self, shuffle: str, task: int, attempt: int, schema: pa.Schema,
            batches: Sequence[pa.RecordBatch], addr: str | None = None,
            rows: int | None = None) -> dict[str, Any]:
        """Puts one attempt of input task on the node at addr; returns the PutResult metadata.

        ``rows`` (default: counted from batches; None for arrays) is declared so a cut
        stream fails instead of passing for the whole task.
        """
        addr = addr or self.nodes[task % len(self.nodes)]
        cmd: dict[str, Any] = {"shuffle": shuffle, "task": task, "attempt": attempt}
        if rows:
            cmd["rows"] = rows
        try:
            return self._put(addr, cmd, schema, batches)
        except _FLIGHT_ERRORS as e:
            raise from_flight(e, shuffle=shuffle, task=task, node=addr) from e

    def _put(self, addr: str, cmd: dict[str, Any], schema: pa.Schema,
             batches: Iterable[pa.RecordBatch]) -> dict[str, Any]:
        desc = flight.FlightDescriptor.for_command(json.dumps(cmd).encode())
        writer, reader = self.conn(addr).do_put(desc, schema, self._options())
        try:
            for b in batches:
                writer.write_batch(b)
            writer.done_writing()
            meta = reader.read()
        finally:
            writer.close()
        return json.loads(meta.to_pybytes()) if meta is not None and meta.size else {}

    def put_tasks(self, shuffle: str, schema: pa.Schema, tasks: Sequence[TaskPut],
                  addr: str | None = None) -> list[TaskOutcome]:
        """Puts several dataframe task attempts in one DoPut on the node at addr (default:
        the first task's node, as ``put``); nodes from revision 4 (``takes_tasks``).

        Each task is the put its own ``put`` would be, with its rows declared; a task that
        fails does not stop the others. Returns one outcome per task, in tasks' order: the
        node's reply, or the ShufflenodeError its own put would have raised (naming
        shuffle, task and node; ``TaskOutcome.result`` raises it). A task the node did not
        answer (the call broke) has the call's error: run it again with a new attempt. A
        task whose batches have another schema than ``schema`` is refused here
        (InvalidArgument) and not sent. Raises, before the put, InvalidArgument for a task
        given twice or more than 65,536 tasks, and Unimplemented for a node before revision
        4 (it would take the stream as one put of task 0).
        """
        check_tasks(shuffle, tasks)
        if not tasks:
            return []
        addr = addr or self.nodes[tasks[0].task % len(self.nodes)]
        with contextlib.suppress(Unavailable):  # then the put fails as well, task by task
            if (rev := self.revision(addr)) < MIN_PUT_TASKS_REVISION:
                raise Unimplemented(f"the node has revision {rev}; a put of several tasks needs "
                                    f"revision {MIN_PUT_TASKS_REVISION}", shuffle=shuffle, node=addr)
        return TaskStream(self.conn(addr), self._options(), addr, shuffle, schema, tasks).run()

    def put_ended(self, addr: str, err: ShufflenodeError | None) -> None:
        """Records how a put on addr ended: after a retryable failure puts avoid the node
        for a second (and ask its revision again); a success ends that at once."""
        if err is None:
            self._avoid.pop(addr, None)
        elif retryable(err):
            self._avoid[addr] = time.monotonic() + 1.0
            with self._lock:
                self._revisions.pop(addr, None)

    def put_task(self, shuffle: str, task: int, attempts: Iterable[int], schema: pa.Schema,
                 batches: Sequence[pa.RecordBatch], first_node: int | None = None,
                 dataframe: bool = True, max_tries: int = 10) -> dict[str, Any]:
        """Puts task with the first of attempts that is free, retrying retryable failures
        with the next attempt on the next node (avoiding nodes that just failed).

        The tries back off from 0.1 s to 1 s: the default's ~6.5 s outlast the failure
        detector declaring a crashed node lost (a few probe intervals), during which the
        live nodes' puts can fail too (their shards for the dead node go nowhere). Three
        tries, 0.3 s apart, gave up before that and failed the caller's job.
        """
        rows = sum(b.num_rows for b in batches) if dataframe else None
        it, err = iter(attempts), None
        base = task if first_node is None else first_node
        tries = 0
        for a in it:
            addr = self._pick(base + tries)
            try:
                rep = self.put(shuffle, task, a, schema, batches, addr, rows)
                self.put_ended(addr, None)
                return rep
            except AlreadyExists as e:
                err = e  # this attempt number was used: take the next one, same node
                continue
            except ShufflenodeError as e:
                self.put_ended(addr, e)
                if not retryable(e) or tries + 1 >= max_tries:
                    raise
                err, tries = e, tries + 1
                time.sleep(min(0.05 * 2**tries, 1.0))
        raise err or InvalidArgument("no attempt number left", shuffle=shuffle, task=task)

    def _pick(self, k: int) -> str:
        n, now = len(self.nodes), time.monotonic()
        for j in range(n):
            addr = self.nodes[(k + j) % n]
            if self._avoid.get(addr, 0.0) <= now:
                return addr
        return self.nodes[k % n]

    # reads

    def read(self, shuffle: str, partition: int, endpoint: Endpoint | None = None,
             recover: Callable[[], None] | None = None, give_up_after: float = 30.0) -> pa.Table:
        """Reads output partition; after a failure that a lost owner may explain it calls
        ``recover`` (barrier rounds with replays), finds the partition's owner again and
        reads on, skipping the rows it already had."""
        ep = endpoint or self.locations(shuffle)[partition]
        got: list[pa.RecordBatch] = []
        schema: pa.Schema | None = None
        deadline = time.monotonic() + give_up_after
        while True:
            try:
                schema = self._read_into(ep, got, shuffle)
                return pa.Table.from_batches(got, schema=schema)
            except ShufflenodeError as e:
                if not _resumable(e) or time.monotonic() > deadline:
                    raise
                time.sleep(0.25)
                if recover is not None:
                    recover()
                ep = self.locations(shuffle)[partition]

    def _read_into(self, ep: Endpoint, got: list[pa.RecordBatch], shuffle: str) -> pa.Schema:
        skip = sum(b.num_rows for b in got)
        try:
            reader = self.conn(ep.addr).do_get(flight.Ticket(ep.ticket), self._options())
            schema = reader.schema
            for chunk in reader:
                b = chunk.data
                if skip >= b.num_rows:
                    skip -= b.num_rows
                    continue
                got.append(b.slice(skip) if skip else b)
                skip = 0
            return schema
        except _FLIGHT_ERRORS as e:
            raise from_flight(e, shuffle=shuffle, partition=ep.partition, node=ep.addr) from e

    def read_many(self, shuffle: str, partitions: Iterable[int],
                  endpoints: Sequence[Endpoint] | None = None,
                  recover: Callable[[], None] | None = None,
                  give_up_after: float = 30.0) -> dict[int, pa.Table]:
        """Reads output partitions of a dataframe shuffle, one DoGet per owner.

        The partitions are grouped by their owners (``endpoints``, default
        ``locations``); each group is read in one DoGet of a list ticket (ranges of
        consecutive partitions as a range), the groups of different owners at once.
        After a failure that a lost owner may explain it calls ``recover``, finds the
        owners again and reads the partitions that did not end, skipping the rows of
        the unfinished one it already had. Gives up after ``give_up_after`` seconds
        without a partition ending. Returns one table per partition, in the order
        given (repeats read once). Array shuffles are read one chunk per ``read``.
        """
        st = _Many(list(dict.fromkeys(int(p) for p in partitions)))
        eps = list(endpoints) if endpoints is not None else self.locations(shuffle)
        deadline = time.monotonic() + give_up_after
        while st.todo():
            before = len(st.done)
            err = self._read_groups(shuffle, _groups(st.todo(), eps), st)
            if err is None or not st.todo():
                continue
            if len(st.done) > before:
                deadline = time.monotonic() + give_up_after
            if not _resumable(err) or time.monotonic() > deadline:
                raise err
            time.sleep(0.25)
            if recover is not None:
                recover()
            eps = self.locations(shuffle)
        return st.tables()

    def _read_groups(self, shuffle: str, groups: list[tuple[str, list[int]]],
                     st: _Many) -> ShufflenodeError | None:
        """Reads each owner's group in its own DoGet, at once; the first failure or None."""
        if len(groups) == 1:
            return self._read_group(shuffle, *groups[0], st)
        with ThreadPoolExecutor(min(len(groups), 16)) as pool:
            futs = [pool.submit(self._read_group, shuffle, a, g, st) for a, g in groups]
            errs = [f.result() for f in futs]
        return next((e for e in errs if e is not None), None)

    def _read_group(self, shuffle: str, addr: str, parts: list[int],
                    st: _Many) -> ShufflenodeError | None:
        """One DoGet of parts on the node at addr, into st; the failure, if any."""
        cmd = {"shuffle": shuffle, **_many_ticket(parts), "pack": True}
        ticket = flight.Ticket(json.dumps(cmd).encode())
        cur = _Cursor(st, parts, shuffle, addr)
        try:
            reader = self.conn(addr).do_get(ticket, self._options())
            st.schema = reader.schema
            for chunk in reader:
                md = None
                if chunk.app_metadata is not None and chunk.app_metadata.size:
                    md = json.loads(chunk.app_metadata.to_pybytes())
                cur.batch(chunk.data, md)
        except _FLIGHT_ERRORS as e:
            part = parts[cur.i] if cur.i < len(parts) else None
            return from_flight(e, shuffle=shuffle, partition=part, node=addr)
        except ShufflenodeError as e:
            return e
        if cur.i < len(parts):
            return Internal(f"the stream ended before partition {parts[cur.i]} did",
                            shuffle=shuffle, partition=parts[cur.i], node=addr)
        return None

    # a whole shuffle

    def run(self, spec: dict[str, Any], schema: pa.Schema, input_fn: Input,
            parallel: int | None = None, max_rounds: int = 30,
            put_on: Callable[[int], int] | None = None, put_batch: int = 0) -> list[Endpoint]:
        """Creates the shuffle, puts every task, settles it and returns its endpoints.

        ``put_batch`` is how many tasks go in one DoPut stream on nodes that take puts of
        several tasks (``TaskRunner.put_batch``: 0 picks, 1 puts each task on its own).
        """
        self.create(spec)
        runner = TaskRunner(self, spec["id"], schema, input_fn, spec["kind"] == "dataframe",
                            parallel or 2 * len(self.nodes), put_on, put_batch=put_batch)
        runner.settle(list(range(spec["tasks"])), max_rounds)
        return self.locations(spec["id"])


def _resumable(e: ShufflenodeError) -> bool:
    return retryable(e) or e.code == "FAILED_PRECONDITION"


#: The most partitions one DoGet ticket may list (docs/flight-api.md).
MAX_TICKET_PARTITIONS = 65536


def _groups(parts: Sequence[int], eps: Sequence[Endpoint]) -> list[tuple[str, list[int]]]:
    """parts grouped by the API address of their owner, ascending, at most
    MAX_TICKET_PARTITIONS per group (an owner with more has several groups)."""
    by: dict[str, list[int]] = {}
    for p in sorted(parts):
        by.setdefault(eps[p].addr, []).append(p)
    return [(addr, ps[k:k + MAX_TICKET_PARTITIONS]) for addr, ps in by.items()
            for k in range(0, len(ps), MAX_TICKET_PARTITIONS)]


def _many_ticket(parts: Sequence[int]) -> dict[str, Any]:
    """The ticket fields of a read of parts: a range when they are consecutive."""
    if parts[-1] - parts[0] + 1 == len(parts):
        return {"range": [parts[0], parts[-1] + 1]}
    return {"partitions": list(parts)}


class _Cursor:
    """Reads one DoGet of parts into st, packed (``{"ends": [[p, row], ...]}`` on the
    batches where partitions end) or not (an end batch of no rows per partition, whose
    metadata is ``{"partition": p, "end": true}``): both forms may come."""

    def __init__(self, st: _Many, parts: list[int], shuffle: str, addr: str) -> None:
        self.st, self.parts, self.shuffle, self.addr = st, parts, shuffle, addr
        self.i = 0
        self.skip = st.rows(parts[0])

    def batch(self, b: pa.RecordBatch, md: dict[str, Any] | None) -> None:
        """Takes one batch of the stream and its metadata (None without)."""
        if md is None:
            self._rows(b)
            return
        if "ends" not in md:  # an unpacked end batch: an end at row 0
            self._end(md)
            return
        at = 0
        for end in md["ends"]:
            p, row = int(end[0]), int(end[1])
            if row < at or row > b.num_rows:
                raise ShufflenodeError(f"end of partition {p} at row {row} of a batch of "
                                       f"{b.num_rows} rows, after row {at}",
                                       shuffle=self.shuffle, partition=p, node=self.addr)
            self._rows(b.slice(at, row - at))
            self._end({"partition": p, "end": True})
            at = row
        self._rows(b.slice(at))

    def _rows(self, b: pa.RecordBatch) -> None:
        if b.num_rows == 0:
            return
        if self.i >= len(self.parts):
            raise ShufflenodeError(f"{b.num_rows} rows after the last partition's end",
                                   shuffle=self.shuffle, node=self.addr)
        self.skip = self.st.add(self.parts[self.i], b, self.skip)

    def _end(self, md: dict[str, Any]) -> None:
        if self.i >= len(self.parts):
            raise ShufflenodeError(f"end marker {md} after the last partition's end",
                                   shuffle=self.shuffle, node=self.addr)
        self.st.end(self.parts[self.i], md, self.shuffle, self.addr)
        self.i += 1
        self.skip = self.st.rows(self.parts[self.i]) if self.i < len(self.parts) else 0


class _Many:
    """The state of a read of many partitions: each one's batches so far, and which
    ended. Groups of different owners touch different partitions."""

    def __init__(self, parts: list[int]) -> None:
        self.parts = parts
        self.got: dict[int, list[pa.RecordBatch]] = {p: [] for p in parts}
        self.done: set[int] = set()
        self.schema: pa.Schema | None = None

    def todo(self) -> list[int]:
        """The partitions that did not end yet."""
        return [p for p in self.parts if p not in self.done]

    def rows(self, p: int) -> int:
        """The rows of partition p already held (skipped when it is streamed again)."""
        return sum(b.num_rows for b in self.got[p])

    def add(self, p: int, b: pa.RecordBatch, skip: int) -> int:
        """Keeps the rows of b past skip; returns the rows still to skip."""
        if skip >= b.num_rows:
            return skip - b.num_rows
        self.got[p].append(b.slice(skip) if skip else b)
        return 0

    def end(self, p: int, md: dict[str, Any], shuffle: str, addr: str) -> None:
        """Records the end of partition p, checking the end marker names it."""
        if not md.get("end") or md.get("partition") != p:
            raise ShufflenodeError(f"end marker {md} where partition {p} was to end",
                                   shuffle=shuffle, partition=p, node=addr)
        self.done.add(p)

    def tables(self) -> dict[int, pa.Table]:
        """One table per partition, in the order asked."""
        return {p: pa.Table.from_batches(self.got[p], schema=self.schema) for p in self.parts}


#: The most tasks TaskRunner puts in one DoPut stream.
MAX_PUT_BATCH = 64
#: The fewest tasks of a round for TaskRunner to put them in batches by default. A
#: batch's batches stay held (client and node) until each of its tasks is answered, so
#: batches of large tasks cost memory for no gain, while past a few thousand tasks a
#: stream per task is what costs (the Go client's rule, client.Job.PutBatch).
MIN_BATCHED_TASKS = 2000


@dataclass
class TaskRunner:
    """Puts tasks of one shuffle and carries out the barrier's replays.

    Attempt numbers: round r (0 first) uses ``r * 1_000_000 + k`` for k = 0, 1, ...
    so every round's attempts are new.

    ``put_batch`` is how many tasks go in one DoPut stream (a put of several tasks,
    ``Client.put_tasks``) to nodes that take them (revision 4 on; older ones get a
    stream per task): 0 picks, for a dataframe round of at least MIN_BATCHED_TASKS
    tasks, about four batches per parallel put, at most MAX_PUT_BATCH tasks (else 1);
    1 puts every task in a stream of its own. With ``put_on``, a batch holds tasks of
    one node. Each task of a batch is still its own attempt; one that fails with a
    retryable code (or finds its attempt number taken) runs again on its own, with new
    attempt numbers, as ``put_task`` runs it.
    """

    client: Client
    shuffle: str
    schema: pa.Schema
    input_fn: Input
    dataframe: bool = True
    parallel: int = 4
    put_on: Callable[[int], int] | None = None
    round: int = 0
    replayed: list[int] = field(default_factory=list)
    put_batch: int = 0

    def put_all(self, tasks: Sequence[int]) -> None:
        """Puts tasks in parallel, in batches of ``batch_size`` tasks per stream; a task that
        keeps failing retryably is left to the barrier."""
        size = self.batch_size(len(tasks))
        with ThreadPoolExecutor(max(1, self.parallel)) as pool:
            if size <= 1:
                futs = [pool.submit(self._put_one, t) for t in tasks]
            else:
                futs = [pool.submit(self._put_batch, k, b) for k, b in self._batches(tasks, size)]
            for f in futs:
                f.result()

    def batch_size(self, n: int) -> int:
        """How many of a round's n tasks go in one DoPut stream (see the class doc)."""
        if not self.dataframe:
            return 1  # a put of several tasks takes dataframes only
        if self.put_batch:
            return max(self.put_batch, 1)
        if n < MIN_BATCHED_TASKS:
            return 1
        return min(max(n // (4 * max(self.parallel, 1)), 1), MAX_PUT_BATCH)

    def _batches(self, tasks: Sequence[int], size: int) -> list[tuple[int, list[int]]]:
        """tasks in batches of at most size, each with the node index it goes to first: the
        batch's index, or with put_on the node all its tasks are put on."""
        if self.put_on is None:
            return [(k, list(tasks[i:i + size])) for k, i in enumerate(range(0, len(tasks), size))]
        by: dict[int, list[int]] = {}
        for t in tasks:
            by.setdefault(self.put_on(t), []).append(t)
        return [(node, ts[i:i + size]) for node, ts in by.items() for i in range(0, len(ts), size)]

    def _put_batch(self, k: int, tasks: list[int]) -> None:
        """Puts tasks in one stream on the k-th node (in turn each round, avoiding nodes that
        just failed), or one by one where the node does not take several."""
        addr = self.client._pick(k + self.round)
        if len(tasks) == 1 or not self.client.takes_tasks(addr):
            for t in tasks:
                self._put_one(t)
            return
        base = self.round * 1_000_000
        puts = [TaskPut(t, base, self.input_fn(t)) for t in tasks]
        outs = self.client.put_tasks(self.shuffle, self.schema, puts, addr)
        self.client.put_ended(addr, next((o.error for o in outs if o.error and retryable(o.error)),
                                         None))
        for p, out in zip(puts, outs, strict=True):
            if out.error is None:
                continue
            if not retryable(out.error) and not isinstance(out.error, AlreadyExists):
                raise out.error
            self._put_one(p.task, p.batches, p.attempt + 1)  # alone, with new attempts

    def _put_one(self, t: int, batches: Sequence[pa.RecordBatch] | None = None,
                 first: int | None = None) -> None:
        base = self.round * 1_000_000
        node = self.put_on(t) if self.put_on else None
        try:
            start = base if first is None else first
            self.client.put_task(self.shuffle, t, range(start, base + 1000), self.schema,
                                 self.input_fn(t) if batches is None else batches, node,
                                 self.dataframe)
        except ShufflenodeError as e:
            if not retryable(e):
                raise

    def settle(self, tasks: Sequence[int], max_rounds: int = 30) -> dict[str, Any]:
        """Puts tasks, then barrier rounds with replays until the shuffle seals."""
        for _ in range(max_rounds):
            self.put_all(tasks)
            self.round += 1
            b = self.client.barrier(self.shuffle)
            if b.get("sealed"):
                return b
            tasks = [int(t) for t in b["replay"]]
            self.replayed += tasks
            time.sleep(min(0.05 * 2**self.round, 2.0))
        raise ShufflenodeError(f"not sealed after {max_rounds} barrier rounds", shuffle=self.shuffle)

    def recover(self) -> None:
        """Barrier rounds (with replays) after a failed read: the resume procedure."""
        self.settle([], 30)
