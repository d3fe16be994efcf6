"""The local cluster started again another way (other nodes: fewer kwok nodes here, a real node instead of kwok
for a user) keeps no Node object of the earlier start: the scheduler would bind pods to them, and those would
never start nor finish terminating."""

from __future__ import annotations

from pathlib import Path

from kompi_engine.cluster.local import FakeNodes, LocalCluster
from tests.e2e.live import Kubectl
from tests.e2e.port_blocks import PortBlock


def test_a_restart_with_other_nodes_deletes_the_earlier_starts_nodes(engine_bin: Path, tmp_path: Path) -> None:
    def start(count: int) -> Kubectl:
        cluster = LocalCluster(tmp_path, bin=engine_bin, ports=PortBlock.RESTARTS.ports, nodes=FakeNodes(count=count))
        cluster.up()
        started.append(cluster)
        return Kubectl(engine_bin / "kubectl", cluster.kubeconfig)

    started: list[LocalCluster] = []
    try:
        kubectl = start(3)
        assert _names(kubectl) == ["kwok-node-0", "kwok-node-1", "kwok-node-2"]
        started.pop().down()
        kubectl = start(1)
        assert _names(kubectl) == ["kwok-node-0"]
    finally:
        for cluster in started:
            cluster.down()


def _names(kubectl: Kubectl) -> list[str]:
    names = kubectl.run("get", "nodes", "-o", "name").stdout.split()
    # deleted with --wait=false: gone at once, as Node objects have no finalizers
    return sorted(name.removeprefix("node/") for name in names)
