"""The local cluster a benchmark runs on (kwok nodes or a real node, on the benchmark's own ports, gone
afterwards), and the sizes a scaling benchmark runs at."""

from __future__ import annotations

import argparse
import math
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kompi_engine.build.engine import build_engine
from kompi_engine.cluster.local import FakeNodes, LocalCluster
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


def fake_nodes_for(pods: int, pod_start_seconds: float = 0.0) -> FakeNodes:
    """4 kwok nodes with room for ``pods`` pods (and a margin), at least the 200 each they always had."""
    return FakeNodes(count=4, pods=max(200, math.ceil(pods / 4) + 10), pod_start_seconds=pod_start_seconds)


@contextmanager
def real_node_cluster(block: PortBlock, image: str) -> Iterator[tuple[LocalCluster, Path]]:
    """A started cluster with one real node that has ``image`` loaded, and a scratch directory."""
    engine = build_engine().bin
    with tempfile.TemporaryDirectory(prefix="kompi-bench-node-") as scratch:
        root = Path(scratch)
        cluster = LocalCluster(
            state=root / "cluster", bin=engine, ports=block.ports, real_node=True, node_images=(image,)
        )
        cluster.up()
        try:
            yield cluster, root
        finally:
            cluster.down()


def sizes_and_rounds(description: str, sizes: tuple[int, ...], rounds: int) -> tuple[list[int], int]:
    """``--workers`` (smallest first) and ``--rounds`` from the command line, with the benchmark's defaults."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--workers", type=int, nargs="+", default=list(sizes), help="sizes, smallest first")
    parser.add_argument("--rounds", type=int, default=rounds)
    options = parser.parse_args()
    return options.workers, options.rounds
