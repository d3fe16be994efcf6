"""Nodes lost under a running cluster (kwok stopped: as if every kubelet died): a change that rolls the pods
fails `up` once stuck for kompi:stuckPodTimeoutSeconds, naming the node and the fix, since the old pods never
finish terminating there; and `destroy` still ends, nothing left."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kompi_engine.cluster.local import FakeNodes, LocalCluster
from tests.e2e.live import Kubectl
from tests.e2e.port_blocks import PortBlock
from tests.e2e.project import Project
from tests.e2e.running import running

NAMESPACE = "kompi-dev"
STUCK_SECONDS = 10  # kompi:stuckPodTimeoutSeconds, 60 by default


@pytest.fixture
def cluster_of_its_own(engine_bin: Path, tmp_path: Path) -> Iterator[LocalCluster]:
    cluster = LocalCluster(
        tmp_path / "cluster", bin=engine_bin, ports=PortBlock.LOST_NODES.ports, nodes=FakeNodes(count=2)
    )
    with running(cluster):
        yield cluster


def _lose_the_nodes(cluster: LocalCluster, kubectl: Kubectl) -> None:
    """Stop kwok, and say at once what the node controller would say after its 50 s grace period."""
    cluster.processes.stop(["kwok"])
    condition = {"type": "Ready", "status": "Unknown", "reason": "NodeStatusUnknown", "message": "test: node lost"}
    for node in cluster.nodes.names():
        patch = json.dumps({"status": {"conditions": [condition]}})
        kubectl.run("patch", "node", node, "--subresource=status", "--type=strategic", "-p", patch)


def test_lost_nodes_fail_up_naming_them_and_destroy_still_ends(
    cluster_of_its_own: LocalCluster, tmp_path: Path
) -> None:
    cluster = cluster_of_its_own
    kubectl = Kubectl(cluster.bin / "kubectl", cluster.kubeconfig)
    project = Project.copy_of("dev", tmp_path / "dev", cluster.kubeconfig)
    project.kompi("up")
    _lose_the_nodes(cluster, kubectl)
    worker_pod = project.config()["kompi:workerPod"] | {"annotations": {"kompi-test": "after"}}
    project.set(workerPod=worker_pod, stuckPodTimeoutSeconds=STUCK_SECONDS)

    started = time.monotonic()
    result = project.kompi("up", check=False)
    seconds = time.monotonic() - started

    assert result.returncode == 1, result.stdout[-2000:]
    last = result.stderr.strip().splitlines()[-1]
    # the node is looked at after 10 s (kube/rollout.NODE_CHECK_SECONDS), then the pod is stuck on it
    assert seconds < 10 + STUCK_SECONDS + 90, f"up took {seconds:.0f} s (the rollout timeout is 600 s)"
    assert "kompi-dev-worker-0 is on node kwok-node-" in last and ", which is not Ready (bring the node back" in last
    assert (
        "kubectl taint node kwok-node-" in last and "node.kubernetes.io/out-of-service=nodeshutdown:NoExecute" in last
    )
    # the old pods never finish terminating on those nodes; destroy releases them and ends
    started = time.monotonic()
    project.kompi("destroy", timeout=300)
    assert time.monotonic() - started < 180
    assert kubectl.get("namespace", NAMESPACE, None) is None
