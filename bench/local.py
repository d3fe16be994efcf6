"""The local cluster a benchmark runs on: kwok nodes on the benchmark's own ports, gone afterwards."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kompi_engine.build import build_engine
from kompi_engine.local_cluster import FakeNodes, LocalCluster
from tests.e2e.port_blocks import PortBlock


@contextmanager
def kwok_cluster(block: PortBlock, nodes: FakeNodes) -> Iterator[tuple[LocalCluster, Path]]:
    """A started cluster (the engine built first if needed) and a scratch directory for projects."""
    engine = build_engine().bin
    with tempfile.TemporaryDirectory(prefix="kompi-bench-") as scratch:
        root = Path(scratch)
        cluster = LocalCluster(state=root / "cluster", bin=engine, ports=block.ports, nodes=nodes)
        cluster.up()
        try:
            yield cluster, root
        finally:
            cluster.down()
