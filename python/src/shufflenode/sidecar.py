"""Starting shufflenode sidecars: the binary, and N local ``serve`` processes."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .client import Auth, Client
from .errors import ShufflenodeError, Unauthenticated


def binary() -> str:
    """Path of the shufflenode binary: $SHUFFLENODE_BIN, the one in the package, or PATH."""
    env = os.environ.get("SHUFFLENODE_BIN", "")
    if env:
        return env
    here = Path(__file__).parent / "bin" / "shufflenode"
    if here.is_file():
        return str(here)
    found = shutil.which("shufflenode")
    if found:
        return found
    raise ShufflenodeError("no shufflenode binary: reinstall the package with Go 1.26+ on PATH, "
                           "or set SHUFFLENODE_BIN")


def free_port() -> int:
    """A TCP port of 127.0.0.1 free right now (a race with other processes remains)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Sidecar:
    """One ``shufflenode serve`` process."""

    name: str
    api: str
    gossip: str
    log: Path
    proc: subprocess.Popen[bytes]

    def alive(self) -> bool:
        """Whether the process still runs."""
        return self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL, and wait until it is gone."""
        self.proc.kill()
        self.proc.wait()

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM (a drain), then SIGKILL after timeout."""
        if not self.alive():
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()

    def log_tail(self, lines: int = 20) -> str:
        """The last lines of its stderr."""
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


def start_sidecar(name: str, data_dir: Path, join: str = "", token_file: str = "",
                  memory_limit: str = "256MiB", extra: Sequence[str] = (),
                  host: str = "127.0.0.1", api_port: int = 0) -> Sidecar:
    """Starts one ``serve`` process on free ports (it is not waited for)."""
    gossip = f"{host}:{free_port()}"
    api = f"{host}:{api_port or free_port()}"
    data_dir.mkdir(parents=True, exist_ok=True)
    log = data_dir.parent / f"{name}.stderr"
    args = [binary(), "serve", "--profile", "local", "--name", name, "--data-dir", str(data_dir),
            "--gossip", gossip, "--api", api, "--admin", "", "--join", join,
            "--memory-limit", memory_limit, "--log-level", "warn", *extra]
    if token_file:
        args += ["--api-token-file", token_file]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHUFFLENODE_")}
    with open(log, "ab") as errf:
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=errf, env=env)
    return Sidecar(name, api, gossip, log, proc)


def wait_members(sc: Sidecar, n: int, auth: Auth, timeout: float = 30.0) -> None:
    """Waits until sc lists n members or more."""
    deadline, last = time.monotonic() + timeout, ""
    with Client(sc.api, auth) as c:
        while time.monotonic() < deadline:
            if not sc.alive():
                raise ShufflenodeError(f"exited while starting: {sc.log_tail()}", node=sc.name)
            try:
                if len(c.members()) >= n:
                    return
            except Unauthenticated:
                raise
            except ShufflenodeError as e:
                last = str(e)
            time.sleep(0.05)
    raise ShufflenodeError(f"not {n} members after {timeout:.0f} s (last: {last})", node=sc.name)


@dataclass
class LocalSidecars:
    """N shufflenode ``serve`` processes on 127.0.0.1 that joined one cluster.

    A context manager: entering starts them and waits until every one lists them
    all; leaving stops them and removes their data::

        with shufflenode.LocalSidecars(3) as sc:
            client = shufflenode.Client(sc.addrs)
    """

    n: int = 2
    token: str = ""
    memory_limit: str = "256MiB"
    extra_args: Sequence[str] = ()
    sidecars: list[Sidecar] = field(default_factory=list)
    _dir: tempfile.TemporaryDirectory[str] | None = None

    @property
    def addrs(self) -> list[str]:
        """API addresses (``host:port``) of the processes, in start order."""
        return [s.api for s in self.sidecars]

    @property
    def auth(self) -> Auth:
        """The Auth that reaches them."""
        return Auth(token=self.token)

    def client(self) -> Client:
        """A Client of all the processes."""
        return Client(self.addrs, self.auth)

    def __enter__(self) -> LocalSidecars:
        self._dir = tempfile.TemporaryDirectory(prefix="shufflenode-")
        try:
            self._start(Path(self._dir.name))
        except BaseException:
            self.__exit__()
            raise
        return self

    def _start(self, root: Path) -> None:
        tf = ""
        if self.token:
            tf = str(root / "api.token")
            Path(tf).write_text(self.token + "\n")
            os.chmod(tf, 0o600)
        first = self._spawn(root, 0, "", tf)
        wait_members(first, 1, self.auth)
        for i in range(1, self.n):
            self._spawn(root, i, first.gossip, tf)
        for s in self.sidecars:
            wait_members(s, self.n, self.auth)

    def _spawn(self, root: Path, i: int, join: str, tf: str) -> Sidecar:
        s = start_sidecar(f"sn-{i}", root / f"sn-{i}", join, tf, self.memory_limit,
                          self.extra_args)
        self.sidecars.append(s)
        return s

    def __exit__(self, *exc: object) -> None:
        for s in self.sidecars:
            with contextlib.suppress(Exception):
                s.kill()
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None
