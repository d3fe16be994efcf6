"""A local cluster of three real nodes for this package (tests/e2e/nodes): each node its own network
namespace with its own kubelet, containerd, CoreDNS and NetworkPolicy controller, joined by one link
(kompi_engine.cluster.fabric). Started once for the package and stopped after it, checking that `down` leaves
nothing behind."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from kompi_engine.cluster.local import LocalCluster
from tests.e2e.live import Kubectl
from tests.e2e.port_blocks import PortBlock
from tests.e2e.running import running
from tests.images.conftest import container_tools, images  # noqa: F401  (fixtures: build kompi's images)

NODES = 3


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if Path(__file__).parent in item.path.parents:
            item.add_marker(pytest.mark.containers)  # kompi's images run here


def leftovers(cluster: LocalCluster) -> list[str]:
    """What of the cluster's nodes outlives `down`: network namespaces, host addresses, cgroups, processes."""
    nodes = cluster.real_node_list
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout.split()
    found = [f"netns {name}" for name in [n.addresses.netns for n in nodes] + [cluster.fabric.netns] if name in listed]
    on_lo = subprocess.run(["ip", "-o", "addr", "show", "dev", "lo"], capture_output=True, text=True, check=True).stdout
    found += [f"address {n.addresses.node_ip}" for n in nodes if f" {n.addresses.node_ip}/" in on_lo]
    found += [f"cgroup {path}" for n in nodes for path in Path("/sys/fs/cgroup").glob(f"*/{n.addresses.cgroup_root}")]
    return found + [f"process {name}" for name, alive in cluster.status().items() if alive]


@pytest.fixture(scope="package")
def nodes(
    node_engine_bin: Path,
    images: dict[str, str],  # noqa: F811
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[LocalCluster]:
    state = tmp_path_factory.mktemp("nodes")
    local = LocalCluster(
        state=state,
        bin=node_engine_bin,
        ports=PortBlock.SEVERAL_NODES.ports,
        real_node=True,
        real_nodes=NODES,
        node_images=tuple(images.values()),
    )
    try:
        with running(local, print):
            yield local
        # after every stack of the package is destroyed: `down` undoes exactly what `up` did
        assert not leftovers(local), leftovers(local)
    finally:
        # the nodes' images (the training image's 6 GB on each, test_training_across_nodes) and the registry's
        # copy go too; pytest would keep them with its last three runs' temporary directories
        shutil.rmtree(state, ignore_errors=True)


@pytest.fixture(scope="package")
def nodes_kubectl(nodes: LocalCluster) -> Kubectl:
    return Kubectl(nodes.bin / "kubectl", nodes.kubeconfig)
