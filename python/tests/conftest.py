"""Fixtures: real shufflenode serve processes and a real distributed.LocalCluster."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import shufflenode
from shufflenode.plugin import SidecarPlugin

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def sidecars() -> Iterator[shufflenode.LocalSidecars]:
    """Three serve processes shared by a module's tests that do not break them."""
    with shufflenode.LocalSidecars(3) as sc:
        yield sc


@pytest.fixture(scope="module")
def dask_client(sidecars: shufflenode.LocalSidecars) -> Iterator[distributed.Client]:
    """A LocalCluster of 3 single-threaded worker processes, each beside a sidecar."""
    with distributed.LocalCluster(n_workers=3, threads_per_worker=1, processes=True,
                                  dashboard_address=None, memory_limit="1GiB") as cluster:
        with distributed.Client(cluster) as client:
            client.register_plugin(SidecarPlugin(sidecars.addrs))
            yield client
