"""Puts of several dataframe tasks in one DoPut stream (docs/flight-api.md, "Several
tasks in one DoPut"; nodes from revision 4).

The descriptor's cmd is ``{"shuffle": ID, "tasks": true}``; the stream carries the
schema, then each task's batches, one task after another, the first batch of each
tagged in its app metadata with ``{"task", "attempt", "rows"}`` (a task without rows
sends one empty batch with its tag). The node runs each task as the put of its own
DoPut would and answers each with one PutResult as it finishes, in any order. The
answers are read on a thread of their own while the tasks are written: a node runs a
bounded number of a call's tasks at once, and each waits until its answer is sent.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.flight as flight

from .errors import Internal, InvalidArgument, ShufflenodeError, from_code, from_flight

#: The first revision whose nodes take puts of several tasks.
MIN_PUT_TASKS_REVISION = 4
#: The most tasks one DoPut may carry.
MAX_PUT_TASKS = 65536

# What pyarrow raises for a failed call (Flight errors, Arrow status errors, OS errors).
_FLIGHT_ERRORS = (flight.FlightError, pa.ArrowException, OSError)


@dataclass(frozen=True)
class TaskPut:
    """One attempt of one input task in a put of several tasks, and its batches.

    ``rows`` is declared to the node (default: counted from ``batches``), which fails
    the task when its stream carries another count.
    """

    task: int
    attempt: int
    batches: Sequence[pa.RecordBatch]
    rows: int | None = None

    def declared_rows(self) -> int:
        """The rows the tag declares (0: not checked by the node)."""
        return self.rows if self.rows is not None else sum(b.num_rows for b in self.batches)


@dataclass
class TaskOutcome:
    """How one task of a put of several tasks ended: the node's reply (``rows``,
    ``bytes``, ``input_bytes``, ``skipped``: a put's PutResult) or the error its own
    put would have raised."""

    task: int
    attempt: int
    reply: dict[str, Any] = field(default_factory=dict)
    error: ShufflenodeError | None = None

    def result(self) -> dict[str, Any]:
        """The reply, or the task's error raised."""
        if self.error is not None:
            raise self.error
        return self.reply


def check_tasks(shuffle: str, tasks: Sequence[TaskPut]) -> None:
    """Raises InvalidArgument for what the node would refuse the whole call for: a
    task given twice, or more than MAX_PUT_TASKS tasks."""
    if len(tasks) > MAX_PUT_TASKS:
        raise InvalidArgument(f"{len(tasks)} tasks in one put; at most {MAX_PUT_TASKS}",
                              shuffle=shuffle)
    seen: set[int] = set()
    for t in tasks:
        if t.task in seen:
            raise InvalidArgument("given twice in one put of several tasks", shuffle=shuffle,
                                  task=t.task)
        seen.add(t.task)


class TaskStream:
    """One DoPut of several tasks on the node at addr: the tasks written, the answers
    read beside them, then one outcome per task."""

    def __init__(self, conn: flight.FlightClient, options: flight.FlightCallOptions, addr: str,
                 shuffle: str, schema: pa.Schema, tasks: Sequence[TaskPut]) -> None:
        self.conn, self.options, self.addr = conn, options, addr
        self.shuffle, self.schema, self.tasks = shuffle, schema, tasks
        self.attempts = {t.task: t.attempt for t in tasks}
        self.answers: dict[int, dict[str, Any]] = {}
        self.refused: dict[int, ShufflenodeError] = {}
        self.bad_reply: ShufflenodeError | None = None

    def run(self) -> list[TaskOutcome]:
        """Puts the tasks; one outcome per task, in the tasks' order."""
        cmd = json.dumps({"shuffle": self.shuffle, "tasks": True}).encode()
        try:
            writer, reader = self.conn.do_put(flight.FlightDescriptor.for_command(cmd), self.schema,
                                              self.options)
        except _FLIGHT_ERRORS as e:
            return self._outcomes(e)
        th = threading.Thread(target=self._read, args=(reader,), daemon=True)
        th.start()
        err = self._write(writer)
        th.join()
        try:
            writer.close()
        except _FLIGHT_ERRORS as e:
            err = e  # the call's status says more than a write that failed
        return self._outcomes(err)

    def _write(self, writer: flight.FlightStreamWriter) -> BaseException | None:
        """Writes every task, then ends the stream; the error that stopped it, or None."""
        try:
            for t in self.tasks:
                self._write_task(writer, t)
        except _FLIGHT_ERRORS as e:
            self._end(writer)
            return e
        except BaseException:
            self._end(writer)
            raise
        return self._end(writer)

    @staticmethod
    def _end(writer: flight.FlightStreamWriter) -> BaseException | None:
        """Half-closes the stream (the node then ends the call once it answered)."""
        try:
            writer.done_writing()
        except _FLIGHT_ERRORS as e:
            return e
        return None

    def _write_task(self, writer: flight.FlightStreamWriter, t: TaskPut) -> None:
        """Writes task t's batches, the first tagged, unless one has another schema than
        the stream's (the task is then refused here and not sent)."""
        for i, b in enumerate(t.batches):
            if not b.schema.equals(self.schema):
                self.refused[t.task] = InvalidArgument(
                    f"batch {i} has schema {b.schema}, not the shuffle's {self.schema}",
                    shuffle=self.shuffle, task=t.task)
                return
        tag: dict[str, int] = {"task": t.task, "attempt": t.attempt}
        if rows := t.declared_rows():
            tag["rows"] = rows
        batches = list(t.batches) or [_empty(self.schema)]
        writer.write_with_metadata(batches[0], pa.py_buffer(json.dumps(tag).encode()))
        for b in batches[1:]:
            writer.write_batch(b)

    def _read(self, reader: flight.FlightMetadataReader) -> None:
        """Reads the answers until the call ends (its status comes from the writer's close)."""
        try:
            while (meta := reader.read()) is not None:
                self._answer(meta.to_pybytes())
        except _FLIGHT_ERRORS:
            return

    def _answer(self, body: bytes) -> None:
        """Records one task's answer; one that does not decode, or names a (task, attempt)
        this put did not send, is the node's fault: the tasks it did not answer fail with
        Internal (run them again)."""
        try:
            rep = json.loads(body)
            task, attempt = int(rep["task"]), int(rep.get("attempt", 0))
        except (ValueError, KeyError, TypeError) as e:
            self.bad_reply = Internal(f"a put's task answer does not decode: {e}",
                                      shuffle=self.shuffle, node=self.addr)
            return
        if self.attempts.get(task) != attempt or task in self.answers:
            self.bad_reply = Internal(f"an answer for task {task} attempt {attempt}, which this "
                                      "put did not send or answered already",
                                      shuffle=self.shuffle, node=self.addr)
            return
        self.answers[task] = rep

    def _outcomes(self, err: BaseException | None) -> list[TaskOutcome]:
        return [self._outcome(t, err) for t in self.tasks]

    def _outcome(self, t: TaskPut, err: BaseException | None) -> TaskOutcome:
        out = TaskOutcome(t.task, t.attempt)
        if t.task in self.refused:
            out.error = self.refused[t.task]
        elif t.task in self.answers:
            rep = self.answers[t.task]
            if rep.get("code"):
                out.error = from_code(int(rep["code"]), str(rep.get("error", "")),
                                      shuffle=self.shuffle, task=t.task, node=self.addr)
            else:
                out.reply = {k: v for k, v in rep.items() if k not in ("task", "attempt")}
        else:
            out.error = self._unanswered(t, err)
        return out

    def _unanswered(self, t: TaskPut, err: BaseException | None) -> ShufflenodeError:
        """The error of a task the call ended without answering: the call's, or Internal
        (the node broke the protocol) when it ended cleanly."""
        if err is not None:
            return from_flight(err, shuffle=self.shuffle, task=t.task, node=self.addr)
        if self.bad_reply is not None:
            return self.bad_reply
        return Internal("the node ended a put of several tasks without answering this task",
                        shuffle=self.shuffle, task=t.task, node=self.addr)


def _empty(schema: pa.Schema) -> pa.RecordBatch:
    """A batch of schema without rows (a task without rows sends one, tagged)."""
    return pa.record_batch([pa.array([], type=f.type) for f in schema], schema=schema)
