"""kompi on the local cluster's real node (kubelet, containerd, CoreDNS): figures from one run.

- `kompi up` of the dev stack to the first successful `mpiexec` over every worker, at 2 and 4 workers
  (`up` itself waits for the rollouts and the master's hostfile, so the job normally runs first time);
- pod start to Ready: creation to the Ready condition, from the API (1 s resolution), median of the pods;
- hostfile convergence after a scale event on the real cluster DNS: a worker seen Ready (polled) to its
  name in the master's hostfile (polled), over several scale-ups. bench/discovery.py measures the same
  loop against a test DNS server, without a kubelet or CoreDNS.
Run as root: venv/bin/python bench/real_node.py  (images/build.sh and the engine build first)
"""

from __future__ import annotations

import datetime
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.local import real_node_cluster
from kompi_components.kube.conditions import is_ready
from kompi_engine.build.engine import build_engine
from kompi_engine.cluster.local import LocalCluster
from kompi_engine.cluster.node_images import kompi_images
from tests.e2e.live import Kubectl
from tests.e2e.node.mpi import run_in
from tests.e2e.port_blocks import PortBlock
from tests.e2e.project import Project

IMAGE_TAG = "4.1.4-bookworm-0.1.0"
SMALL_POD = {"resources": {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"memory": "1Gi"}}}
WORKERS = (2, 4)
SCALE_EVENTS = 4


def _exec(kubectl: Kubectl, namespace: str, pod: str, command: str) -> subprocess.CompletedProcess[str]:
    return run_in(kubectl, namespace, pod, *shlex.split(command))


def _start_to_ready(pods: list[dict[str, Any]]) -> float:
    def at(stamp: str) -> datetime.datetime:
        return datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00"))

    spans = []
    for pod in pods:
        ready = [c for c in pod["status"].get("conditions", []) if c["type"] == "Ready" and c["status"] == "True"]
        if ready:
            spans.append(
                (at(ready[0]["lastTransitionTime"]) - at(pod["metadata"]["creationTimestamp"])).total_seconds()
            )
    return statistics.median(spans)


def up_to_first_job(root: Path, cluster: LocalCluster, kubectl: Kubectl, workers: int) -> dict[str, float]:
    project = Project.copy_of("dev", root / f"w{workers}", cluster.kubeconfig)
    project.set(workers=workers, imageTag=IMAGE_TAG, masterPod=SMALL_POD, workerPod=SMALL_POD)
    started = time.perf_counter()
    out = project.last_json(project.kompi("up"))
    up_done = time.perf_counter() - started
    namespace, master, attempts = out["namespace"], out["masterPod"], 0
    while True:
        attempts += 1
        result = _exec(kubectl, namespace, master, f"mpiexec -n {workers} hostname")
        if result.returncode == 0 and len(set(result.stdout.split())) == workers:
            break
        time.sleep(0.2)
    first_job = time.perf_counter() - started
    figures = {
        "up": up_done,
        "up to first job": first_job,
        "attempts": attempts,
        "pod start to Ready": _start_to_ready(kubectl.items("pods", namespace)),
    }
    if workers == WORKERS[-1]:
        figures["hostfile convergence"] = convergence(kubectl, namespace, master, workers)
    project.kompi("destroy")
    return figures


def convergence(kubectl: Kubectl, namespace: str, master: str, workers: int) -> float:
    """Median seconds from a new worker seen Ready to its name in the hostfile, over SCALE_EVENTS scale-ups."""
    gaps = []
    for _ in range(SCALE_EVENTS):
        new = f"kompi-dev-worker-{workers}"
        kubectl.run("scale", "statefulset", "kompi-dev-worker", "-n", namespace, f"--replicas={workers + 1}")
        while not is_ready(kubectl.get("pod", new, namespace) or {}):
            time.sleep(0.1)
        ready_at = time.perf_counter()
        while new not in _exec(kubectl, namespace, master, 'sh -c "cat $KOMPI_HOSTFILE"').stdout:
            time.sleep(0.05)
        gaps.append(time.perf_counter() - ready_at)
        kubectl.run("scale", "statefulset", "kompi-dev-worker", "-n", namespace, f"--replicas={workers}")
        while kubectl.get("pod", new, namespace) is not None:
            time.sleep(0.2)
    print(f"hostfile convergence samples: {', '.join(f'{gap:.2f}' for gap in gaps)} s")
    return statistics.median(gaps)


def main() -> int:
    build_engine()  # before the clock starts: the cluster's start-up is what it times
    image = f"localhost/kompi:{IMAGE_TAG}"
    if image not in kompi_images():
        print(f"no {image} in podman's store: run images/build.sh first", file=sys.stderr)
        return 1
    started = time.perf_counter()
    with real_node_cluster(PortBlock.BENCH_REAL_NODE, image) as (cluster, root):
        print(f"local cluster with a real node up in {time.perf_counter() - started:.1f} s (image loaded)")
        kubectl = Kubectl(cluster.bin / "kubectl", cluster.kubeconfig)
        for workers in WORKERS:
            figures = up_to_first_job(root, cluster, kubectl, workers)
            print(f"{workers} workers: " + ", ".join(f"{name} {value:.2f}" for name, value in figures.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
