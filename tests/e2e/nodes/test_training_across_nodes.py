"""The training example across the three real nodes, as on a user's own cluster: the training image pushed
to a registry (node 0's) by images/build.sh and pulled from there by every node, one worker on each node,
gloo between them over the link. The model comes out the same as from the same ranks in one pod: placement
changes the speed, not the result. On the nodes' own network (kompi:hostNetwork), with each node's /etc/hosts
as Debian and Ubuntu write it (the host name on 127.0.1.1), it comes out as on the pod network too.

It runs last in the package: the image takes about 6 GB on each node, removed with the cluster's state."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kompi_engine.cluster.local import LocalCluster
from kompi_engine.cluster.real_node import RealNode
from tests.e2e.live import Kubectl, wait_until
from tests.e2e.node.faults import Stack
from tests.e2e.node.mpi import exec_in, hostfile_hosts
from tests.e2e.node.test_registry import SECRET, pull_secret, push
from tests.e2e.nodes.conftest import NODES
from tests.e2e.nodes.node_loss import node_of, real_node_named
from tests.e2e.nodes.spread import spread_stack
from tests.e2e.nodes.test_host_network import link_subnet
from tests.e2e.training.conftest import FLAVOR, TRAINING_POD
from tests.e2e.training.test_training import EPOCHS, MIN_ACCURACY, train

# three ranks of the one-pod run share one worker's memory limit
POD = TRAINING_POD | {"resources": TRAINING_POD["resources"] | {"limits": {"memory": "3Gi"}}}
# what a node keeps of a pulled image besides its snapshot: the manifest and config, not the layers
KEPT_AFTER_UNPACK_BYTES = 1 << 20
# on the nodes' network every kompi pod takes a node of its own (sshd's port), the master one of the three
HOST_NETWORK_WORKERS = NODES - 1
# what Debian's and Ubuntu's installers put in /etc/hosts besides localhost
DEBIAN_HOST_ADDRESS = "127.0.1.1"
HOST_ADDRESS = "import socket; print(socket.gethostbyname(socket.gethostname()))"


def content_bytes(node: RealNode) -> int:
    """The size of the node's containerd content store (the blobs of its images' layers, manifests, configs)."""
    blobs = node.state / "containerd" / "root" / "io.containerd.content.v1.content" / "blobs"
    return sum(path.stat().st_size for path in blobs.rglob("*") if path.is_file())


@pytest.fixture(scope="module")
def across(nodes: LocalCluster, nodes_kubectl: Kubectl, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    registry = nodes.node.registry
    before = {node.name: content_bytes(node) for node in nodes.real_node_list}
    began = time.monotonic()
    image = push(registry, FLAVOR)
    pushed = time.monotonic()
    name = "kompi-train-nodes"
    nodes_kubectl.run("create", "namespace", name)  # the pull Secret goes in before the pods
    project, stack = spread_stack(nodes, nodes_kubectl, tmp_path_factory.mktemp(name), name, image, NODES, POD)
    project.set(createNamespace=False, imagePullSecrets=[SECRET])
    try:
        pull_secret(nodes_kubectl, registry.auth_file, name)
        project.kompi("up")
        stack.every_worker_ready()
        print(f"\npushed in {pushed - began:.0f} s; up, every node pulling, in {time.monotonic() - pushed:.0f} s")
        for pod in nodes_kubectl.items("pods", name):
            for container in pod["status"]["containerStatuses"]:
                assert container["imageID"].startswith(f"{registry.address}/kompi@sha256:")  # pulled, not loaded

        def layers_discarded() -> bool:
            grown = {node.name: content_bytes(node) - before[node.name] for node in nodes.real_node_list}
            print(f"content store growth after the pull, bytes: {grown}")
            return all(bytes_ < KEPT_AFTER_UNPACK_BYTES for bytes_ in grown.values())

        # the CRI's discard_unpacked_layers: once unpacked, the layers' blobs go (containerd's garbage collector)
        wait_until("every node kept one copy of the image", layers_discarded, 120)
        yield stack
    finally:
        project.kompi("destroy", check=False)
        nodes_kubectl.run("delete", "namespace", name, "--wait=false", check=False)


def test_training_across_the_nodes_learns_as_the_same_ranks_in_one_pod(across: Stack) -> None:
    kubectl, namespace = across.kubectl, across.namespace
    workers = [across.worker(index) for index in range(across.workers)]
    placed = {worker: node_of(kubectl, namespace, worker) for worker in workers}
    assert sorted(placed.values()) == sorted(node.name for node in across.local.real_node_list), placed

    spread = train(across, "--epochs", str(EPOCHS))  # the hostfile: one rank on each worker
    assert (spread.ranks, spread.hosts, spread.backend) == (NODES, NODES, "gloo")
    assert spread.final_accuracy is not None and spread.final_accuracy >= MIN_ACCURACY, spread.final_line

    first = hostfile_hosts(kubectl, namespace, across.master)[0]
    in_one_pod = train(across, "--epochs", str(EPOCHS), launcher=("--host", f"{first}:{NODES}", "-n", str(NODES)))
    assert (in_one_pod.ranks, in_one_pod.hosts) == (NODES, 1)
    seconds = [sum(epoch.seconds for epoch in run.epochs) for run in (spread, in_one_pod)]
    print(f"\n{spread.final_line}; epochs took {seconds[0]:.1f} s on {NODES} nodes, {seconds[1]:.1f} s in one pod")
    assert in_one_pod.final_line == spread.final_line  # the same seed and ranks: the same loss to the digit


def debian_hosts_file(kubectl: Kubectl, nodes: LocalCluster, namespace: str, pod: str) -> None:
    """The host-network ``pod``'s /etc/hosts as on a Debian or Ubuntu node: its node's name on 127.0.1.1, first.

    The kubelet copies its node's /etc/hosts into each host-network pod (the file etc-hosts in the pod's
    directory, bind-mounted at /etc/hosts); the local cluster's nodes share this machine's, which need not name
    them at all. So the line goes into that copy, in place (a new file would not be the one mounted)."""
    live = kubectl.get("pod", pod, namespace)
    assert live is not None and live["spec"].get("hostNetwork") is True, pod
    node = real_node_named(nodes, live["spec"]["nodeName"])
    hosts = node.state / "kubelet" / "pods" / live["metadata"]["uid"] / "etc-hosts"
    with hosts.open("r+") as file:
        kept = file.read()
        file.seek(0)
        file.write(f"{DEBIAN_HOST_ADDRESS}\t{node.name}\n{kept}")
        file.truncate()


def test_training_on_the_nodes_network_with_debian_hosts_files_ends_as_on_the_pod_network(
    across: Stack, nodes: LocalCluster, tmp_path: Path
) -> None:
    """Issue 44: kompi_torch took rank 0's address from its host name, which a host-network pod resolves through
    its node's /etc/hosts: on Debian and Ubuntu 127.0.1.1, so every other rank dialled its own loopback and the
    process group timed out after 300 s. Now rank 0 offers its address on kompi:hostNetwork.mpiInterfaces and
    gloo binds there, on every rank."""
    kubectl = across.kubectl
    first, second = hostfile_hosts(kubectl, across.namespace, across.master)[:HOST_NETWORK_WORKERS]
    launcher = ("--host", f"{first}:1,{second}:1", "-n", str(HOST_NETWORK_WORKERS))
    on_pods = train(across, "--epochs", str(EPOCHS), launcher=launcher)
    assert (on_pods.ranks, on_pods.hosts, on_pods.backend) == (HOST_NETWORK_WORKERS, HOST_NETWORK_WORKERS, "gloo")

    master = kubectl.get("pod", across.master, across.namespace)
    assert master is not None
    (image,) = [container["image"] for container in master["spec"]["containers"] if container["name"] == "mpi"]
    name = "kompi-train-host"
    kubectl.run("create", "namespace", name)
    project, stack = spread_stack(nodes, kubectl, tmp_path / name, name, image, HOST_NETWORK_WORKERS, POD)
    project.set(
        createNamespace=False,
        imagePullSecrets=[SECRET],
        hostNetwork={"enabled": True, "mpiInterfaces": link_subnet(nodes)},
        networkPolicy={"enabled": False},
    )
    try:
        pull_secret(kubectl, nodes.node.registry.auth_file, name)
        project.kompi("up")
        stack.every_worker_ready()
        pods = [stack.master, *(stack.worker(index) for index in range(HOST_NETWORK_WORKERS))]
        placed = {pod: node_of(kubectl, name, pod) for pod in pods}
        assert sorted(placed.values()) == sorted(node.name for node in nodes.real_node_list), placed
        for pod in pods:
            debian_hosts_file(kubectl, nodes, name, pod)
        for worker in pods[1:]:  # what kompi_torch read before: the host name's address, loopback
            said = exec_in(kubectl, name, worker, "python3", "-c", HOST_ADDRESS).strip()
            assert said == DEBIAN_HOST_ADDRESS, (worker, said)

        on_nodes = train(stack, "--epochs", str(EPOCHS))  # the hostfile: one rank on each worker
        assert (on_nodes.ranks, on_nodes.hosts, on_nodes.backend) == (
            HOST_NETWORK_WORKERS,
            HOST_NETWORK_WORKERS,
            "gloo",
        )
        print(f"\n{on_nodes.final_line}: on the nodes' network as on the pod network")
        assert on_nodes.final_line == on_pods.final_line  # the same seed and ranks: the same loss to the digit
    finally:
        project.kompi("destroy", check=False)
        kubectl.run("delete", "namespace", name, "--wait=false", check=False)
