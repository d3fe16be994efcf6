"""Whole-cluster rollout: `kompi up` of an image change to every pod Ready on it, at 2, 64 and 512 workers.

On the local cluster with kwok nodes whose pods take 5 s to start (kompi's kwok stage, as a container
start would), measured in one run. kompi's rollout step deletes every pod of the old revision at once
(one DELETE per pod, many in flight) and the StatefulSets (Parallel) start all replacements together,
so the time should hardly grow with the workers: T(512)/T(2) <= 2. A rolling update one pod at a time
would take N x 5 s (2560 s at 512).
`up` returns only once every pod runs the new image and is Ready, which the benchmark checks after it.
It prints the API server's write requests per rollout too (its own counters).
Run: venv/bin/python bench/rollout.py [--workers 2 64 512] [--rounds 2]  (builds the engine first if needed)
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.api_writes import summary, write_counts, writes_between
from bench.local import fake_nodes_for, kwok_cluster, sizes_and_rounds
from bench.scaling_report import report
from kompi_components.kube.conditions import is_ready
from tests.e2e.live import Kubectl
from tests.e2e.port_blocks import PortBlock
from tests.e2e.project import Project

WORKERS = (2, 64, 512)
ROUNDS = 2
LIMIT = 2.0
POD_START_SECONDS = 5.0
TAGS = ("4.1.4-bookworm-0.1.0", "5.0.11-bookworm-0.1.0")
SMALL_POD = {"resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}


def _image_change(project: Project, kubectl: Kubectl, tag: str) -> float:
    """Seconds of `kompi up` with ``tag``; fails unless every pod then runs it and is Ready."""
    project.set(imageTag=tag)
    start = time.perf_counter()
    project.kompi("up", timeout=1200)
    seconds = time.perf_counter() - start
    namespace = project.config()["kompi:namespace"]
    pods = kubectl.items("pods", namespace)
    stale = [pod["metadata"]["name"] for pod in pods if not pod["spec"]["containers"][0]["image"].endswith(tag)]
    not_ready = [pod["metadata"]["name"] for pod in pods if not is_ready(pod)]
    assert not stale and not not_ready, f"after up: old image {stale[:5]}, not Ready {not_ready[:5]}"
    return seconds


def main() -> int:
    sizes, rounds = sizes_and_rounds(__doc__.splitlines()[0], WORKERS, ROUNDS)
    times: dict[int, list[float]] = {n: [] for n in sizes}
    # every size's cluster (its workers and master) stays up
    nodes = fake_nodes_for(sum(sizes) + len(sizes), pod_start_seconds=POD_START_SECONDS)
    with kwok_cluster(PortBlock.BENCH_ROLLOUT, nodes) as (cluster, root):
        kubectl = Kubectl(cluster.bin / "kubectl", cluster.kubeconfig)
        projects = {}
        for n in sizes:
            project = Project.copy_of("dev", root / f"w{n}", cluster.kubeconfig)
            project.set(clusterName=f"bench-{n}", namespace=f"bench-{n}", workers=n, workerPod=SMALL_POD)
            project.set(masterPod=SMALL_POD, imageTag=TAGS[0])
            project.kompi("up", timeout=1200)
            projects[n] = project
        # sizes interleaved round by round, so that machine noise hits all of them alike
        for round_number in range(rounds):
            for n in sizes:
                before = write_counts(kubectl)
                seconds = _image_change(projects[n], kubectl, TAGS[(round_number + 1) % 2])
                writes = summary(writes_between(before, write_counts(kubectl)), n)
                times[n].append(seconds)
                print(f"round {round_number + 1}, {n} workers: image change rolled out in {seconds:.1f} s; {writes}")
        for project in projects.values():
            project.kompi("destroy", timeout=1200)
    medians = {n: statistics.median(samples) for n, samples in times.items()}
    one_by_one = sizes[-1] * POD_START_SECONDS
    print(f"pods start in {POD_START_SECONDS:.0f} s; one pod at a time, {sizes[-1]} would take {one_by_one:.0f} s")
    return 1 if report("image change, up to every pod Ready", medians, LIMIT, lambda s: f"{s:.1f} s") else 0


if __name__ == "__main__":
    sys.exit(main())
