"""A local cluster for as long as a fixture or test holds it: started, and stopped however the holder ends."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from kompi_engine.cluster.local import LocalCluster


@contextmanager
def running(cluster: LocalCluster, log: Callable[[str], None] = lambda _: None) -> Iterator[LocalCluster]:
    cluster.up(log)
    try:
        yield cluster
    finally:
        cluster.down()
