"""`kompi up` and `kompi preview` wall time of the dev stack at workers = 1, 64 and 512, on one local
cluster (real API server, kwok nodes), measured in one run. kompi's objects do not multiply with the
workers (one StatefulSet whatever its replicas), so neither should Pulumi's work: T(512)/T(1) <= 1.5.

`up` includes pulumi-kubernetes waiting for every pod of the StatefulSets to be Ready. The local
cluster's processes share the machine's cores with kompi, so the benchmark also prints the CPU seconds
each of them and kompi (with Pulumi) spent per `up`: where the wall time beyond T(1) goes.
It prints the API server's write requests per `up` too (its own counters): what a larger cluster costs.
Run: venv/bin/python bench/engine_up.py [--workers 1 64 512] [--rounds 2]  (builds the engine first if needed)
"""

from __future__ import annotations

import collections
import os
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.api_writes import summary, write_counts, writes_between
from bench.local import fake_nodes_for, kwok_cluster, sizes_and_rounds
from bench.scaling_report import report
from kompi_engine.cluster.local import LocalCluster
from kompi_engine.cluster.processes import cpu_seconds
from tests.e2e.live import Kubectl
from tests.e2e.port_blocks import PortBlock
from tests.e2e.project import Project

WORKERS = (1, 64, 512)
ROUNDS = 2
LIMIT = 1.5


KOMPI = "kompi and Pulumi"


def _timed(project: Project, operation: str) -> float:
    start = time.perf_counter()
    project.kompi(operation)
    return time.perf_counter() - start


def _cpu_by_process(cluster: LocalCluster) -> dict[str, float]:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # kompi's runs, once they have exited
    return {entry.name: cpu_seconds(entry.pid) for entry in cluster.processes.running()} | {
        KOMPI: usage.ru_utime + usage.ru_stime
    }


def _timed_with_cpu(project: Project, cluster: LocalCluster) -> tuple[float, dict[str, float]]:
    before = _cpu_by_process(cluster)
    seconds = _timed(project, "up")
    after = _cpu_by_process(cluster)
    return seconds, {name: after[name] - before.get(name, 0.0) for name in after}


def _print_cpu(cpu: dict[int, dict[str, float]]) -> None:
    sizes = list(cpu)
    names = sorted(cpu[sizes[-1]], key=lambda name: -cpu[sizes[-1]][name])
    print(f"CPU seconds per `kompi up` (last round; {os.cpu_count()} cores share them):")
    print("  " + "process".ljust(30) + "".join(f"{f'workers={n}':>14}" for n in sizes))
    for name in [*names, "total"]:
        row = [sum(cpu[n].values()) if name == "total" else cpu[n].get(name, 0.0) for n in sizes]
        print("  " + name.ljust(30) + "".join(f"{seconds:>14.2f}" for seconds in row))
    cores = os.cpu_count() or 1
    largest = sum(cpu[sizes[-1]].values())
    print(f"  the CPU alone keeps T({sizes[-1]}) >= {largest / cores:.1f} s on {cores} cores")


def main() -> int:
    sizes, rounds = sizes_and_rounds(__doc__.splitlines()[0], WORKERS, ROUNDS)
    up: dict[int, list[float]] = {n: [] for n in sizes}
    preview: dict[int, list[float]] = {n: [] for n in sizes}
    cpu: dict[int, dict[str, float]] = collections.defaultdict(dict)
    with kwok_cluster(PortBlock.BENCH_ENGINE_UP, fake_nodes_for(max(sizes) + 1)) as (cluster, root):
        kubectl = Kubectl(cluster.bin / "kubectl", cluster.kubeconfig)
        # sizes interleaved round by round, so that machine noise hits all of them alike
        for round_number in range(rounds):
            for n in sizes:
                project = Project.copy_of("dev", root / f"r{round_number}-w{n}", cluster.kubeconfig)
                project.set(workers=n, workerPod={"resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}})
                before = write_counts(kubectl)
                seconds, cpu[n] = _timed_with_cpu(project, cluster)
                print(
                    f"round {round_number + 1}, {n} workers: up {seconds:.1f} s, "
                    + summary(writes_between(before, write_counts(kubectl)), n),
                    flush=True,
                )
                up[n].append(seconds)
                preview[n].append(_timed(project, "preview"))
                project.kompi("destroy")
    failed = False
    for label, samples in (("kompi up", up), ("kompi preview", preview)):
        times = {n: statistics.median(values) for n, values in samples.items()}
        failed |= report(label, times, LIMIT, lambda seconds: f"{seconds:.1f} s")
    _print_cpu(cpu)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
