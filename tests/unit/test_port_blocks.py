"""The local clusters of the tests and benchmarks never share a port, a node address or a network namespace
with each other or with a user's own `kompi local up`."""

from __future__ import annotations

import re
from dataclasses import astuple
from pathlib import Path

import pytest

from kompi_engine.cluster.ports import Ports
from kompi_engine.cluster.real_node import MAX_NODES, NodeAddresses
from tests.e2e.port_blocks import SESSION_SHIFTS, WORKERS, PortBlock, shift

# a user's cluster, and the blocks of two test sessions (KOMPI_TEST_PORT_SHIFT 0 and 500), each with two
# pytest-xdist workers
SHIFTS = [
    shift({"KOMPI_TEST_PORT_SHIFT": str(s), "PYTEST_XDIST_WORKER": f"gw{w}"})
    for s in SESSION_SHIFTS
    for w in range(WORKERS)
]
CLUSTERS = [Ports(), *(Ports.shifted(block.value + s) for s in SHIFTS for block in PortBlock)]


def _repeated(values: list[object]) -> list[object]:
    return sorted({value for value in values if values.count(value) > 1}, key=str)


def test_no_two_clusters_share_a_port() -> None:
    """Nor two of one cluster's ports, its real nodes' included (Ports holds every port a cluster derives)."""
    taken = [port for ports in CLUSTERS for port in astuple(ports)]
    assert not _repeated(taken)
    for ports in CLUSTERS:
        assert NodeAddresses.for_cluster(ports.apiserver).kubelet_port == ports.kubelet
        assert Ports.of_apiserver(ports.apiserver) == ports


def test_the_free_port_check_covers_the_host_ports_only() -> None:
    ports = Ports()
    assert ports.on_host(real_nodes=True)["kubelet"] == 10250
    assert "kubelet" not in ports.on_host(real_nodes=False)  # a machine's own kubelet meets no kwok cluster
    assert not {"coredns_health", "coredns_ready", "kube_router_health"} & set(ports.on_host(real_nodes=True))


def test_no_two_real_nodes_share_an_address_or_a_namespace() -> None:
    """Every cluster with its largest number of real nodes, and the link between them."""
    nodes = [NodeAddresses.for_cluster(ports.apiserver, index) for ports in CLUSTERS for index in range(MAX_NODES)]
    assert not _repeated([node.node_ip for node in nodes]) and not _repeated([node.netns for node in nodes])
    assert not _repeated([node.cgroup_root for node in nodes])
    links = [NodeAddresses.fabric_for(ports.apiserver).netns for ports in CLUSTERS]
    assert not _repeated(links) and not set(links) & {node.netns for node in nodes}
    assert nodes[0].kubelet_port == 10250  # a user's node: the kubelet's usual port


def test_each_worker_of_each_session_has_blocks_of_its_own() -> None:
    assert SHIFTS == [0, 100, 500, 600]
    assert shift({}) == 0  # one process, no xdist


@pytest.mark.parametrize(
    ("environment", "refused"),
    [
        ({"PYTEST_XDIST_WORKER": "gw2"}, "pytest-xdist worker gw2: at most 2 workers"),
        ({"KOMPI_TEST_PORT_SHIFT": "200"}, "KOMPI_TEST_PORT_SHIFT=200: expected one of (0, 500)"),
    ],
)
def test_a_shift_whose_blocks_could_meet_another_is_refused(environment: dict[str, str], refused: str) -> None:
    with pytest.raises(ValueError, match=re.escape(refused)):
        shift(environment)


def test_every_test_port_is_below_the_ephemeral_ports_ci_sets() -> None:
    """Where the kernel picks a listener's port (Pulumi's plugins) from the same range, a cluster can find its own
    taken: .ci/run moves the range above every port of every block of both sessions' workers."""
    ci = (Path(__file__).parents[2] / ".ci" / "run").read_text()
    (low,) = re.findall(r'^KOMPI_EPHEMERAL_PORTS="(\d+) \d+"', ci, re.MULTILINE)
    assert max(port for ports in CLUSTERS for port in astuple(ports)) < int(low)
