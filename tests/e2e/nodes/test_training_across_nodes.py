"""The training example across the three real nodes, as on a user's own cluster: the training image pushed
to a registry (node 0's) by images/build.sh and pulled from there by every node, one worker on each node,
gloo between them over the link. The model comes out the same as from the same ranks in one pod: placement
changes the speed, not the result.

It runs last in the package: the image takes about 6 GB on each node, removed with the cluster's state."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from kompi_engine.local_cluster import LocalCluster
from kompi_engine.real_node import RealNode
from tests.e2e.live import Kubectl, wait_until
from tests.e2e.node.faults import Stack
from tests.e2e.node.mpi import hostfile_hosts
from tests.e2e.node.test_registry import SECRET, pull_secret, push
from tests.e2e.nodes.conftest import NODES
from tests.e2e.nodes.node_loss import node_of
from tests.e2e.nodes.spread import spread_stack
from tests.e2e.training.conftest import FLAVOR, TRAINING_POD
from tests.e2e.training.test_training import EPOCHS, MIN_ACCURACY, train

# three ranks of the one-pod run share one worker's memory limit
POD = TRAINING_POD | {"resources": TRAINING_POD["resources"] | {"limits": {"memory": "3Gi"}}}
# what a node keeps of a pulled image besides its snapshot: the manifest and config, not the layers
KEPT_AFTER_UNPACK_BYTES = 1 << 20


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
