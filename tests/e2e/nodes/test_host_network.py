"""kompi:hostNetwork on three real nodes: master and workers on the nodes' own network (one kompi pod per node,
sshd on kompi's port there), MPI across nodes over the link's addresses, host keys verified, discovery through
cluster DNS, scaling down and up, and a worker too many refused by the scheduler and reported by `up`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kompi_components import contract
from kompi_engine.cluster.local import LocalCluster
from tests.e2e.live import Kubectl
from tests.e2e.node.conftest import SMALL_POD
from tests.e2e.node.faults import Stack
from tests.e2e.node.mpi import allreduce, exec_in, hostfile_hosts
from tests.e2e.nodes.node_loss import node_of
from tests.e2e.project import Project

NAME = "kompi-host"


def link_subnet(nodes: LocalCluster) -> str:
    return f"{nodes.node.addresses.node_ip.rsplit('.', 1)[0]}.0/24"


def host_network_project(nodes: LocalCluster, directory: Path, image: str, **settings: object) -> Project:
    """A dev stack on the nodes' network, Open MPI on the link between them."""
    project = Project.copy_of("dev", directory, nodes.kubeconfig)
    project.set(
        imageTag=image.split(":", 1)[1],
        masterPod=SMALL_POD,
        workerPod=SMALL_POD,
        hostNetwork={"enabled": True, "mpiInterfaces": link_subnet(nodes)},
        networkPolicy={"enabled": False},
        **settings,
    )
    return project


@pytest.fixture(scope="module")
def host_stack(
    nodes: LocalCluster, nodes_kubectl: Kubectl, images: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Project, Stack]]:
    directory = tmp_path_factory.mktemp(NAME) / "dev"
    project = host_network_project(nodes, directory, images["ompi5"], clusterName=NAME, namespace=NAME, workers=2)
    try:
        project.kompi("up")
        stack = Stack(nodes_kubectl, nodes, "ompi5", NAME, 2)
        stack.every_worker_ready()
        yield project, stack
    finally:
        project.kompi("destroy", check=False)


def node_addresses(nodes: LocalCluster) -> dict[str, str]:
    return {node.name: node.addresses.node_ip for node in nodes.real_node_list}


def test_every_pod_takes_a_node_of_its_own_and_mpi_runs_between_the_nodes_addresses(
    host_stack: tuple[Project, Stack], nodes: LocalCluster
) -> None:
    _, stack = host_stack
    kubectl, namespace = stack.kubectl, stack.namespace
    pods = [stack.master, stack.worker(0), stack.worker(1)]
    placed = {pod: node_of(kubectl, namespace, pod) for pod in pods}
    assert sorted(placed.values()) == sorted(node_addresses(nodes)), placed  # three pods, three nodes
    for pod in pods:
        live = kubectl.get("pod", pod, namespace)
        assert live["status"]["podIP"] == node_addresses(nodes)[placed[pod]]  # type: ignore[index]

    # the hostfile names the workers by their DNS names, which resolve to their nodes' addresses
    hosts = hostfile_hosts(kubectl, namespace, stack.master)
    assert [host.split(".", 1)[0] for host in hosts] == [stack.worker(0), stack.worker(1)]
    reports = allreduce(kubectl, namespace, stack.master, 2)
    for report in reports:  # each rank sees its node's own addresses and name: it runs on the node's network
        worker = stack.worker(report["rank"])
        assert node_addresses(nodes)[placed[worker]] in report["addresses"], report
        assert report["hostname"] == placed[worker]

    # ssh checks each worker's host key against the cluster's known_hosts, for the name that reaches the node
    strict = ["-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes", "-p", str(contract.SSH_PORT)]
    for host in hosts:
        said = exec_in(kubectl, namespace, stack.master, "ssh", *strict, host, "echo", "verified")
        assert said.strip() == "verified"


def test_scaling_down_and_up_and_a_worker_with_no_node_left_is_reported(
    host_stack: tuple[Project, Stack], tmp_path: Path
) -> None:
    project, stack = host_stack
    kubectl, namespace = stack.kubectl, stack.namespace
    project.set(workers=1)
    project.kompi("up")
    assert len(allreduce(kubectl, namespace, stack.master, 1)) == 1
    project.set(workers=2)
    project.kompi("up")
    Stack(kubectl, stack.local, stack.flavor, stack.name, 2).every_worker_ready()
    assert len(allreduce(kubectl, namespace, stack.master, 2)) == 2

    # a third worker would need a fourth node: the scheduler finds no node with port 2222 free
    project.set(workers=3)
    failed = project.up_that_fails(within_seconds=240)
    assert f"{stack.worker(2)} is not scheduled" in failed and "free ports" in failed, failed[-3000:]
    project.set(workers=2)
    project.kompi("up")
    assert len(allreduce(kubectl, namespace, stack.master, 2)) == 2


def test_a_namespace_whose_policy_refuses_host_network_pods_fails_up_quoting_the_refusal(
    nodes: LocalCluster, nodes_kubectl: Kubectl, images: dict[str, str], tmp_path: Path
) -> None:
    """A namespace of the user's (kompi:createNamespace false) that enforces restricted: the API server refuses
    the pods, and `up` says so within about a minute instead of waiting out its timeout."""
    namespace = "kompi-host-refused"
    nodes_kubectl.run("create", "namespace", namespace)
    nodes_kubectl.run("label", "namespace", namespace, "pod-security.kubernetes.io/enforce=restricted")
    project = host_network_project(nodes, tmp_path / "dev", images["ompi5"], namespace=namespace, createNamespace=False)
    try:
        failed = project.up_that_fails(within_seconds=180)
    finally:
        project.kompi("destroy", check=False)
        nodes_kubectl.run("delete", "namespace", namespace, "--wait=false", check=False)
    assert "is not created (FailedCreate: " in failed and 'violates PodSecurity "restricted:latest"' in failed, failed
