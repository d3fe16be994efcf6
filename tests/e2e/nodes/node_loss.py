"""A node that loses power under a running kompi cluster, and its way back, on a local cluster of several real
nodes: what tests/e2e/node/test_several_nodes.py checks and bench/node_loss.py times.

1. the node of a worker (not the master's) powers off: containers, kubelet and its link gone at once;
2. Kubernetes marks the node not Ready and its pods not Ready; the master's hostfile drops the worker;
3. a job over the remaining workers runs;
4. the operator, sure the node is off, taints it out of service (node.kubernetes.io/out-of-service): its
   pods are deleted and the StatefulSet makes the worker again on a node with room; the hostfile has it;
5. a job over every worker runs; the node powers on again and the taint is lifted.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kompi_components.kube.conditions import is_ready
from kompi_engine.cluster.local import LocalCluster
from kompi_engine.cluster.real_node import RealNode
from tests.e2e.live import Kubectl, wait_until
from tests.e2e.node.faults import Stack
from tests.e2e.node.mpi import allreduce, hostfile_hosts

OUT_OF_SERVICE = "node.kubernetes.io/out-of-service=nodeshutdown:NoExecute"


@dataclass
class NodeLoss:
    """What happened, in seconds from the power-off."""

    node: str
    worker: str
    hostfile_shrunk: float = 0.0
    tainted_at: float = 0.0
    replaced: float = 0.0  # the worker Ready again, on another node
    hostfile_whole: float = 0.0
    replaced_on: str = ""
    remaining_job: list[dict[str, Any]] = field(default_factory=list)  # the job's reports over the rest
    whole_job: list[dict[str, Any]] = field(default_factory=list)  # over every worker, after the replacement

    def __str__(self) -> str:
        return (
            f"node {self.node} (worker {self.worker}) powered off: hostfile without it after "
            f"{self.hostfile_shrunk:.1f} s; out-of-service taint at {self.tainted_at:.1f} s; worker Ready again on "
            f"{self.replaced_on} after {self.replaced:.1f} s; hostfile whole after {self.hostfile_whole:.1f} s"
        )


def node_of(kubectl: Kubectl, namespace: str, pod: str) -> str:
    live = kubectl.get("pod", pod, namespace)
    return str((live or {}).get("spec", {}).get("nodeName", ""))


def real_node_named(cluster: LocalCluster, name: str) -> RealNode:
    return next(node for node in cluster.real_node_list if node.name == name)


def workers_listed(stack: Stack) -> set[str]:
    return {host.split(".", 1)[0] for host in hostfile_hosts(stack.kubectl, stack.namespace, stack.master)}


def lose_a_node(stack: Stack, log: Callable[[str], None] = print) -> NodeLoss:
    """Steps 1-5 above on a stack whose master is on the cluster's first node; the node is back afterwards
    (also when a step fails)."""
    kubectl, namespace, cluster = stack.kubectl, stack.namespace, stack.local
    master_node = node_of(kubectl, namespace, stack.master)
    workers = [stack.worker(index) for index in range(stack.workers)]
    placed = {worker: node_of(kubectl, namespace, worker) for worker in workers}
    worker = next(w for w in workers if placed[w] != master_node)
    node = real_node_named(cluster, placed[worker])
    loss = NodeLoss(node.name, worker)
    started = time.monotonic()
    node.power_off()
    log(f"powered off {node.name}, which ran {worker}")
    try:
        wait_until(f"{worker} out of the hostfile", lambda: worker not in workers_listed(stack), 300)
        loss.hostfile_shrunk = time.monotonic() - started
        loss.remaining_job = allreduce(kubectl, namespace, stack.master, stack.workers - 1)

        kubectl.run("taint", "node", node.name, OUT_OF_SERVICE)
        loss.tainted_at = time.monotonic() - started

        def ready_elsewhere() -> bool:
            live = kubectl.get("pod", worker, namespace)
            return live is not None and is_ready(live) and live["spec"].get("nodeName") != node.name

        wait_until(f"{worker} Ready on another node", ready_elsewhere, 300)
        loss.replaced = time.monotonic() - started
        loss.replaced_on = node_of(kubectl, namespace, worker)
        wait_until(f"{worker} back in the hostfile", lambda: worker in workers_listed(stack), 60)
        loss.hostfile_whole = time.monotonic() - started
        loss.whole_job = allreduce(kubectl, namespace, stack.master, stack.workers)
    finally:
        node.up(log, cluster.node_images)
        kubectl.run("taint", "node", node.name, OUT_OF_SERVICE.split("=")[0] + "-", check=False)
    log(str(loss))
    return loss
