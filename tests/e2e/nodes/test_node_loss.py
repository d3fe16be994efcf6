"""A node that loses power under a running kompi cluster (tests/e2e/nodes/node_loss.py has the steps)."""

from __future__ import annotations

from pathlib import Path

from kompi_components.kube.conditions import is_ready
from kompi_engine.cluster.local import LocalCluster
from tests.e2e.live import Kubectl, wait_until
from tests.e2e.nodes.node_loss import lose_a_node
from tests.e2e.nodes.spread import spread_stack


def test_a_node_that_loses_power_drops_its_worker_which_comes_back_on_another_node(
    nodes: LocalCluster, nodes_kubectl: Kubectl, images: dict[str, str], tmp_path: Path
) -> None:
    """Two workers, one per node, on three nodes: the hostfile drops the lost node's worker and a job runs
    over the other; taken out of service, the node gives the worker up and it is made again on the node
    left free; a job runs over both; the node powers on again."""
    project, stack = spread_stack(nodes, nodes_kubectl, tmp_path / "dev", "kompi-loss", images["ompi5"], 2)
    try:
        project.kompi("up")
        stack.every_worker_ready()
        loss = lose_a_node(stack)
    finally:
        project.kompi("destroy", check=False)
    workers = {stack.worker(0), stack.worker(1)}
    assert {report["hostname"] for report in loss.remaining_job} == workers - {loss.worker}
    assert loss.replaced_on not in ("", loss.node)
    assert {report["hostname"] for report in loss.whole_job} == workers
    wait_until(f"{loss.node} Ready again", lambda: is_ready(nodes_kubectl.get("node", loss.node, None) or {}), 120)
