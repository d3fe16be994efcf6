"""`kompi up` and `kompi preview` wall time of the dev stack at workers = 1, 64 and 512, on one local
cluster (real API server, kwok nodes), measured in one run. kompi's objects do not multiply with the
workers (one StatefulSet whatever its replicas), so neither should Pulumi's work: T(512)/T(1) <= 1.5.

`up` includes pulumi-kubernetes waiting for every pod of the StatefulSets to be Ready.
Run: venv/bin/python bench/engine_up.py  (builds the engine first if needed)
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.scaling_report import report
from kompi_components.engine.build import build_engine
from kompi_components.engine.local_cluster import FakeNodes, LocalCluster
from tests.e2e.port_blocks import PortBlock
from tests.e2e.project import Project

WORKERS = (1, 64, 512)
ROUNDS = 2
LIMIT = 1.5


def _timed(project: Project, operation: str) -> float:
    start = time.perf_counter()
    project.kompi(operation)
    return time.perf_counter() - start


def main() -> int:
    engine = build_engine().bin
    with tempfile.TemporaryDirectory(prefix="kompi-bench-") as scratch:
        root = Path(scratch)
        cluster = LocalCluster(
            state=root / "cluster",
            bin=engine,
            ports=PortBlock.BENCH_ENGINE_UP.ports,
            nodes=FakeNodes(count=4, pods=200),
        )
        cluster.up()
        try:
            up: dict[int, list[float]] = {n: [] for n in WORKERS}
            preview: dict[int, list[float]] = {n: [] for n in WORKERS}
            # sizes interleaved round by round, so that machine noise hits all of them alike
            for round_number in range(ROUNDS):
                for n in WORKERS:
                    project = Project.copy_of("dev", root / f"r{round_number}-w{n}", cluster.kubeconfig)
                    project.set(workers=n, workerPod={"resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}})
                    up[n].append(_timed(project, "up"))
                    preview[n].append(_timed(project, "preview"))
                    project.kompi("destroy")
        finally:
            cluster.down()
    failed = False
    for label, samples in (("kompi up", up), ("kompi preview", preview)):
        times = {n: statistics.median(values) for n, values in samples.items()}
        failed |= report(label, times, LIMIT, lambda seconds: f"{seconds:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
