"""The program's rollout step on a live cluster: a pod that no node can take fails `up` once it has been so for
kompi:stuckPodTimeoutSeconds, naming it, why, and the fix, or at the rollout timeout if that is shorter (a lost
node: test_lost_node.py)."""

from __future__ import annotations

import time

from tests.e2e.live import Kubectl
from tests.e2e.project import Project

STUCK_SECONDS = 10  # kompi:stuckPodTimeoutSeconds (default 60): the shortest that still tells it from the timeout
UP_SECONDS = 60  # what `up` takes besides: Pulumi, the StatefulSet's update, the rollout step's checks


def _failure(project: Project) -> tuple[str, float]:
    started = time.monotonic()
    result = project.kompi("up", check=False)
    assert result.returncode == 1, result.stdout[-2000:]
    return result.stderr.strip().splitlines()[-1], time.monotonic() - started


def test_a_pod_no_node_can_take_fails_up_once_stuck_for_its_setting_or_at_the_timeout(
    project_factory, kubectl: Kubectl
) -> None:
    project: Project = project_factory("dev")
    project.kompi("up")
    # a new template whose pods no node can take: the old pods are deleted, the new ones never scheduled
    workers = project.config()["kompi:workerPod"]
    project.set(workerPod=workers | {"nodeSelector": {"kompi-test": "no-such-node"}}, rolloutTimeoutSeconds=15)
    last, _ = _failure(project)
    assert last.startswith("error: pulumi up failed (details above): StatefulSet kompi-dev-worker: 2 of 2 pods"), last
    assert "not Ready on the current template after 15 s: kompi-dev-worker-0 is not scheduled (Unschedulable" in last

    project.set(rolloutTimeoutSeconds=600, stuckPodTimeoutSeconds=STUCK_SECONDS)
    last, seconds = _failure(project)
    assert seconds < STUCK_SECONDS + UP_SECONDS, f"up took {seconds:.0f} s (the rollout timeout is 600 s)"
    assert f"StatefulSet kompi-dev-worker: 2 of 2 pods cannot start ({STUCK_SECONDS} s in the same state): " in last
    assert "kompi-dev-worker-0 is not scheduled (Unschedulable: 0/4 nodes are available" in last
    assert "add nodes, or ask for less (kompi:workers, kompi:gpusPerWorker" in last
    # the master was not touched: only the workers' template changed
    assert kubectl.items("pods", "kompi-dev", "app.kubernetes.io/component=master")
