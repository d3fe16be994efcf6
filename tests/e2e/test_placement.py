"""kompi:oneWorkerPerNode on the local cluster's four nodes: four workers land on four nodes, a fifth has no
node to go to and `up` says so once it has waited kompi:stuckPodTimeoutSeconds, and scaling back converges."""

from __future__ import annotations

import time

from tests.e2e.live import Kubectl
from tests.e2e.project import Project

NAMESPACE = "kompi-dev"
STUCK_SECONDS = 10  # kompi:stuckPodTimeoutSeconds, 60 by default


def _nodes(kubectl: Kubectl) -> list[str]:
    workers = kubectl.items("pods", NAMESPACE, "app.kubernetes.io/component=worker")
    return sorted(pod["spec"].get("nodeName", "") for pod in workers)


def test_one_worker_per_node_spreads_the_workers_and_a_worker_too_many_fails_up(
    project_factory, kubectl: Kubectl
) -> None:
    project: Project = project_factory("dev")
    project.set(oneWorkerPerNode=True, workers=4)
    project.kompi("up")
    nodes = _nodes(kubectl)
    assert len(set(nodes)) == 4 and "" not in nodes, nodes

    project.set(workers=5, stuckPodTimeoutSeconds=STUCK_SECONDS)
    started = time.monotonic()
    result = project.kompi("up", check=False)
    assert result.returncode == 1, result.stdout[-2000:]
    assert time.monotonic() - started < STUCK_SECONDS + 90
    last = result.stderr.strip().splitlines()[-1]
    assert "kompi-dev-worker-4 is not scheduled (Unschedulable: 0/4 nodes are available" in last, last
    assert "anti-affinity" in last and f"({STUCK_SECONDS} s in the same state)" in last

    project.set(workers=4)
    project.kompi("up")
    assert len(set(_nodes(kubectl))) == 4
