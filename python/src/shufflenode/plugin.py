"""A Dask worker plugin that starts or finds the shufflenode sidecar beside each worker."""

from __future__ import annotations

import os
import socket
import tempfile
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from distributed import WorkerPlugin

from .client import Auth, Client
from .sidecar import Sidecar, start_sidecar, wait_members

PLUGIN_NAME = "shufflenode-sidecar"


class SidecarPlugin(WorkerPlugin):
    """Gives each Dask worker the API address of the sidecar beside it.

    Three ways to find it, in this order:

    - ``start=True``: the worker starts its own ``serve`` process on its host,
      joining the cluster at ``join`` (a gossip ``host:port``; empty for the first);
    - ``$SHUFFLENODE_API`` in the worker's environment (and the token from the file
      ``$SHUFFLENODE_API_TOKEN_FILE`` names, unless ``auth`` has one) (one sidecar per machine,
      started by systemd or a Kubernetes DaemonSet);
    - ``addrs``: the sidecars' API addresses; a worker takes one on its own host,
      chosen from a hash of its name (LocalCluster with ``LocalSidecars``).

    ``addrs`` (when given) also tells every worker the other sidecars, to put to
    when its own is unreachable.
    """

    name = PLUGIN_NAME

    def __init__(self, addrs: Sequence[str] = (), auth: Auth | None = None, start: bool = False,
                 join: str = "", memory_limit: str = "1GiB", host: str = "127.0.0.1") -> None:
        self.addrs, self.auth, self.start = list(addrs), auth or Auth(), start
        self.join, self.memory_limit, self.host = join, memory_limit, host
        self.addr = ""
        self._sidecar: Sidecar | None = None

    def setup(self, worker: Any) -> None:
        """Finds or starts the sidecar for worker."""
        token_file = os.environ.get("SHUFFLENODE_API_TOKEN_FILE", "")
        if not self.auth.token and token_file:
            self.auth = Auth(token=Path(token_file).read_text().split()[0])
        if self.start:
            self.addr = self._start(str(worker.name))
        else:
            self.addr = os.environ.get("SHUFFLENODE_API", "") or self._choose(str(worker.name))
        if self.addr and self.addr not in self.addrs:
            self.addrs.append(self.addr)

    def _start(self, name: str) -> str:
        root = Path(tempfile.mkdtemp(prefix="shufflenode-worker-"))
        safe = "".join(ch if ch.isalnum() else "-" for ch in name)
        sc = start_sidecar(f"{socket.gethostname()}-{safe}"[:60], root / "data", self.join,
                           memory_limit=self.memory_limit, host=self.host)
        self._sidecar = sc
        wait_members(sc, 1, self.auth)
        return sc.api

    def _choose(self, name: str) -> str:
        if not self.addrs:
            return ""
        host = socket.gethostbyname(socket.gethostname())
        local = [a for a in self.addrs if a.rsplit(":", 1)[0] in ("127.0.0.1", "localhost", host)]
        pool = local or self.addrs
        return pool[zlib.crc32(name.encode()) % len(pool)]

    def teardown(self, worker: Any) -> None:
        """Stops a sidecar the plugin started."""
        if self._sidecar is not None:
            self._sidecar.stop()

    def client(self) -> Client:
        """A Client of the sidecars this worker knows, its own first."""
        return Client(self.addrs or [self.addr], self.auth)


def worker_plugin() -> SidecarPlugin | None:
    """The SidecarPlugin of the Dask worker running this code, or None."""
    try:
        from distributed import get_worker

        return get_worker().plugins.get(PLUGIN_NAME)  # type: ignore[no-any-return]
    except (ImportError, ValueError):
        return None


def local_sidecar() -> tuple[str, list[str]]:
    """(the sidecar beside the current Dask worker, every sidecar it knows), or ("", [])."""
    plugin = worker_plugin()
    if plugin is None:
        return "", []
    return plugin.addr, list(plugin.addrs)
