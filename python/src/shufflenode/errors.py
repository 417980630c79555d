"""Exceptions of the shufflenode package, one per gRPC status code of the Flight API.

Every exception names the shuffle it concerns, and the task, partition and node
where they are known (docs/flight-api.md, "Status codes and what to do").
"""

from __future__ import annotations

import re

import pyarrow as pa
import pyarrow.flight as flight


class ShufflenodeError(Exception):
    """A shuffle failed; ``code`` is the gRPC status code name (or "")."""

    code: str = ""

    def __init__(
        self,
        message: str,
        *,
        shuffle: str | None = None,
        task: int | None = None,
        partition: int | None = None,
        node: str | None = None,
    ) -> None:
        self.shuffle, self.task, self.partition, self.node = shuffle, task, partition, node
        super().__init__(_prefix(shuffle, task, partition, node) + message)


def _prefix(shuffle: str | None, task: int | None, partition: int | None, node: str | None) -> str:
    parts = [f"shuffle {shuffle}" if shuffle else ""]
    parts += [f"task {task}" if task is not None else ""]
    parts += [f"partition {partition}" if partition is not None else ""]
    parts += [f"node {node}" if node else ""]
    text = " ".join(p for p in parts if p)
    return f"shufflenode: {text}: " if text else "shufflenode: "


class NotFound(ShufflenodeError):
    """No such shuffle on the node (never created, closed or expired)."""

    code = "NOT_FOUND"


class InvalidArgument(ShufflenodeError):
    """Bad spec, schema, chunk, task, partition or column values: fix the request."""

    code = "INVALID_ARGUMENT"


class AlreadyExists(ShufflenodeError):
    """The shuffle ID exists (create) or this (task, attempt) was used (put)."""

    code = "ALREADY_EXISTS"


class FailedPrecondition(ShufflenodeError):
    """Read before the seal, or a put after the seal the coordinator could not confirm."""

    code = "FAILED_PRECONDITION"


class Aborted(ShufflenodeError):
    """The shuffle failed: run it again under a new ID."""

    code = "ABORTED"


class Unavailable(ShufflenodeError):
    """A node, peer or coordinator could not be reached (also cut calls)."""

    code = "UNAVAILABLE"


class Unimplemented(ShufflenodeError):
    """Unknown action or protocol version."""

    code = "UNIMPLEMENTED"


class ResourceExhausted(ShufflenodeError):
    """A message over the gRPC limit, or a full disk on the node."""

    code = "RESOURCE_EXHAUSTED"


class Unauthenticated(ShufflenodeError):
    """The node wants a bearer token and the call had none or a wrong one."""

    code = "UNAUTHENTICATED"


class PermissionDenied(ShufflenodeError):
    """A file outside the node's input or output roots."""

    code = "PERMISSION_DENIED"


class Internal(ShufflenodeError):
    """The node failed inside, or the call was cut: retry as Unavailable."""

    code = "INTERNAL"


_BY_CODE: dict[str, type[ShufflenodeError]] = {
    c.code: c
    for c in (
        NotFound, InvalidArgument, AlreadyExists, FailedPrecondition, Aborted, Unavailable,
        Unimplemented, ResourceExhausted, Unauthenticated, PermissionDenied, Internal,
    )
}
_BY_CLASS: list[tuple[type[BaseException], str]] = [
    (flight.FlightUnauthenticatedError, "UNAUTHENTICATED"),
    (flight.FlightUnauthorizedError, "PERMISSION_DENIED"),
    (flight.FlightUnavailableError, "UNAVAILABLE"),
    (flight.FlightTimedOutError, "UNAVAILABLE"),
    (flight.FlightCancelledError, "UNAVAILABLE"),
    (flight.FlightInternalError, "INTERNAL"),
    (pa.ArrowNotImplementedError, "UNIMPLEMENTED"),
    (pa.ArrowKeyError, "NOT_FOUND"),
]
_GRPC_WORDS = re.compile(r"(?:gRPC|Flight) returned ([a-z ]+?) error")


def grpc_code(exc: BaseException) -> str:
    """The gRPC status code name a pyarrow Flight exception stands for ("" if none)."""
    m = _GRPC_WORDS.search(str(exc))
    if m:
        name = m.group(1).strip().upper().replace(" ", "_")
        if name in _BY_CODE or name in ("CANCELLED", "DEADLINE_EXCEEDED", "UNKNOWN"):
            return _retryable_alias(name)
    for cls, name in _BY_CLASS:
        if isinstance(exc, cls):
            return name
    if isinstance(exc, pa.ArrowInvalid):
        return "INVALID_ARGUMENT"
    return "INTERNAL" if isinstance(exc, (flight.FlightError, OSError)) else ""


def _retryable_alias(name: str) -> str:
    return "UNAVAILABLE" if name in ("CANCELLED", "DEADLINE_EXCEEDED") else (
        "INTERNAL" if name == "UNKNOWN" else name)


def from_flight(
    exc: BaseException,
    *,
    shuffle: str | None = None,
    task: int | None = None,
    partition: int | None = None,
    node: str | None = None,
) -> ShufflenodeError:
    """Wraps a pyarrow Flight exception in the ShufflenodeError of its status code."""
    if isinstance(exc, ShufflenodeError):
        return exc
    cls = _BY_CODE.get(grpc_code(exc), ShufflenodeError)
    msg = _clean(str(exc))
    return cls(msg, shuffle=shuffle, task=task, partition=partition, node=node)


#: gRPC status code names by number (google.golang.org/grpc/codes).
_CODE_NAMES = (
    "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
    "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
    "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
)


def from_code(
    code: int,
    message: str,
    *,
    shuffle: str | None = None,
    task: int | None = None,
    partition: int | None = None,
    node: str | None = None,
) -> ShufflenodeError:
    """The ShufflenodeError of a gRPC status code given as a number (as a put of several
    tasks answers a task that failed), mapped as ``from_flight`` maps a call's status."""
    name = _CODE_NAMES[code] if 0 <= code < len(_CODE_NAMES) else "UNKNOWN"
    cls = _BY_CODE.get(_retryable_alias(name), ShufflenodeError)
    return cls(message, shuffle=shuffle, task=task, partition=partition, node=node)


def _clean(msg: str) -> str:
    return msg.split(". gRPC client debug context")[0].split("\nDetail:")[0].strip()


def retryable(exc: BaseException) -> bool:
    """Whether a failed put or read may run again (as a new attempt, or resumed)."""
    return isinstance(exc, (Unavailable, Internal))
