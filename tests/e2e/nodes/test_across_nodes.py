"""kompi across three real nodes: one worker on each, MPI over the link between them, DNS, exec and logs on
every node, the NetworkPolicy between nodes, and a worker deleted mid-job on another node."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from kompi_components.kube.conditions import is_ready
from kompi_engine.cluster.local import LocalCluster
from kompi_engine.cluster.real_node import NODE_NAME
from tests.e2e.live import Kubectl, wait_until
from tests.e2e.node.faults import EXIT_WITHIN, Job, Stack
from tests.e2e.node.mpi import allreduce, exec_in
from tests.e2e.node.test_network_policy import outsider, reaches
from tests.e2e.nodes.conftest import NODES
from tests.e2e.nodes.node_loss import node_of
from tests.e2e.nodes.spread import spread_stack


@pytest.fixture(scope="module", params=["ompi4", "ompi5"])
def spread(
    request: pytest.FixtureRequest,
    nodes: LocalCluster,
    nodes_kubectl: Kubectl,
    images: dict[str, str],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Stack]:
    """One worker on each node, of one flavour; shared by the module's tests of that flavour."""
    flavor: str = request.param
    name = f"kompi-spread-{flavor}"
    project, stack = spread_stack(nodes, nodes_kubectl, tmp_path_factory.mktemp(name), name, images[flavor], NODES)
    try:
        project.kompi("up")
        stack.every_worker_ready()
        yield stack
    finally:
        project.kompi("destroy", check=False)


def a_worker_off_the_first_node(stack: Stack) -> str:
    workers = [stack.worker(index) for index in range(stack.workers)]
    return next(w for w in workers if node_of(stack.kubectl, stack.namespace, w) != NODE_NAME)


def test_the_nodes_are_ready_each_on_its_address_of_one_link(nodes: LocalCluster, nodes_kubectl: Kubectl) -> None:
    live = {node["metadata"]["name"]: node for node in nodes_kubectl.json("get", "nodes")["items"]}
    assert sorted(live) == sorted(node.name for node in nodes.real_node_list)
    for node in nodes.real_node_list:
        assert is_ready(live[node.name])
        addresses = {a["type"]: a["address"] for a in live[node.name]["status"]["addresses"]}
        assert addresses["InternalIP"] == node.addresses.node_ip
        address, link = (
            subprocess.run(["ip", "-n", node.addresses.netns, "-o", what, "show", "dev", "eth0"],
                           capture_output=True, text=True, check=True).stdout
            for what in ("addr", "link")
        )  # fmt: skip
        assert f"inet {node.addresses.node_ip}/24" in address and f"mtu {nodes.mtu} " in link


def test_mpi_runs_across_the_nodes_with_one_worker_on_each(spread: Stack) -> None:
    kubectl, namespace = spread.kubectl, spread.namespace
    workers = [spread.worker(index) for index in range(spread.workers)]
    placed = {worker: node_of(kubectl, namespace, worker) for worker in workers}
    assert sorted(placed.values()) == sorted(node.name for node in spread.local.real_node_list), placed
    assert node_of(kubectl, namespace, spread.master) == NODE_NAME

    reports = allreduce(kubectl, namespace, spread.master, spread.workers)
    assert {report["hostname"] for report in reports} == set(workers)  # one rank on each node

    # every node's DNS finds every worker, and the API server reaches every node's kubelet (exec, logs)
    domain = f"{spread.name}.{namespace}.svc.cluster.local"
    for worker in workers:
        others = [f"{other}.{domain}" for other in workers if other != worker]
        resolved = exec_in(kubectl, namespace, worker, "getent", "hosts", *others)
        assert len(resolved.splitlines()) == len(others), resolved
        assert "sshd" in kubectl.run("logs", "-n", namespace, worker, "-c", "mpi").stdout


def test_the_network_policy_fences_a_worker_from_a_pod_on_another_node(spread: Stack, images: dict[str, str]) -> None:
    """The master reaches a worker on another node; a pod without the cluster's labels, on the master's node,
    does not, until it carries them."""
    kubectl, namespace = spread.kubectl, spread.namespace
    worker = a_worker_off_the_first_node(spread)
    worker_ip = kubectl.get("pod", worker, namespace)["status"]["podIP"]  # type: ignore[index]
    assert reaches(kubectl, namespace, spread.master, worker_ip)

    stranger = outsider(namespace, images[spread.flavor])
    stranger["spec"]["nodeName"] = NODE_NAME
    kubectl.run("apply", "-f", "-", input_text=yaml.safe_dump(stranger))
    try:
        wait_until("the outsider Ready", lambda: is_ready(kubectl.get("pod", "outsider", namespace) or {}), 120)
        assert not reaches(kubectl, namespace, "outsider", worker_ip)
        policy = kubectl.get("networkpolicy", spread.name, namespace)
        labels = [f"{key}={value}" for key, value in policy["spec"]["podSelector"]["matchLabels"].items()]  # type: ignore[index]
        kubectl.run("label", "pod", "outsider", "-n", namespace, *labels)
        wait_until("the relabelled pod let in", lambda: reaches(kubectl, namespace, "outsider", worker_ip), 30)
    finally:
        kubectl.run("delete", "pod", "outsider", "-n", namespace, "--wait=false", check=False)


def test_a_worker_deleted_mid_job_on_another_node_fails_the_job_and_is_made_again(
    spread: Stack, tmp_path: Path
) -> None:
    victim = a_worker_off_the_first_node(spread)
    job = Job(spread, tmp_path / "deleted.log")
    job.wait_running()
    fault = time.monotonic()
    spread.kubectl.run("delete", "pod", victim, "-n", spread.namespace, "--wait=false")
    ending = job.end(fault)
    print(f"{spread.flavor}, worker pod on another node deleted: {ending}")
    assert ending.code not in (None, 0), ending.output[-3000:]
    assert ending.seconds < EXIT_WITHIN
    assert ending.names(victim), ending.output[-3000:]
    spread.every_worker_ready()  # made again, and in the hostfile again
    assert len(allreduce(spread.kubectl, spread.namespace, spread.master, spread.workers)) == spread.workers
