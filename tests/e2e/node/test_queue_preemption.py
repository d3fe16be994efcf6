"""Kueue preemption on the real node: what an MPI engineer sees when a higher-priority workload takes the quota.

A job running on the queued cluster exits non-zero (Kueue deletes every pod of the group, the master and its
hostfile with them); the pods are made again at once, gated and holding nothing; once the quota is free Kueue
admits them by themselves, the hostfile lists the workers again and a job runs.
"""

from __future__ import annotations

import json
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

from kompi_components.manifests import quantities, queue
from kompi_engine.cluster.kueue import API, CLUSTER_QUEUE
from kompi_engine.cluster.local import LocalCluster
from tests.e2e.live import Kubectl, wait_until
from tests.e2e.node.faults import Job, Stack
from tests.e2e.node.mpi import allreduce, hostfile_hosts
from tests.e2e.project import Project


def memory_pod(bytes_: Fraction) -> dict[str, Any]:
    """A pod asking for ``bytes_`` of memory (Kueue's quota here is the node's memory; nothing uses it)."""
    return {"resources": {"requests": {"cpu": "50m", "memory": f"{int(bytes_) // 2**20}Mi"}}}


def quota_memory(kubectl: Kubectl) -> Fraction:
    found = kubectl.get("clusterqueues.kueue.x-k8s.io", CLUSTER_QUEUE, None)
    assert found is not None, f"no ClusterQueue {CLUSTER_QUEUE}"
    resources = found["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
    return quantities.parse(next(r["nominalQuota"] for r in resources if r["name"] == "memory"))


def gated(pod: dict[str, Any]) -> bool:
    return any(gate["name"] == queue.ADMISSION_GATE for gate in pod["spec"].get("schedulingGates", []))


def test_a_preempted_cluster_ends_its_job_then_comes_back_by_itself_and_runs_jobs_again(
    stack_namespace, node_project, node_kubectl: Kubectl, real_cluster: LocalCluster, images, tmp_path: Path
) -> None:
    namespace = stack_namespace("kompi-preempted")
    urgent = {"apiVersion": API, "kind": "WorkloadPriorityClass", "metadata": {"name": "urgent"}, "value": 1000}
    local_queue = {"apiVersion": API, "kind": "LocalQueue", "metadata": {"name": "team", "namespace": namespace},
                   "spec": {"clusterQueue": CLUSTER_QUEUE}}  # fmt: skip
    for manifest in (urgent, local_queue):
        node_kubectl.run("apply", "-f", "-", input_text=json.dumps(manifest))
    # Each cluster alone fits the quota (the node's memory), both together do not: 60% + 50%.
    memory = quota_memory(node_kubectl)
    tag = images["ompi4"].split(":", 1)[1]
    common = {"namespace": namespace, "createNamespace": False, "queue": "team", "workers": 1}
    low: Project = node_project("dev", tag, "low", clusterName=namespace, **common)
    low.set(masterPod=memory_pod(memory * 3 / 10), workerPod=memory_pod(memory * 3 / 10))
    high: Project = node_project("dev", tag, "high", clusterName="kompi-urgent", queuePriorityClass="urgent", **common)
    high.set(masterPod=memory_pod(memory / 4), workerPod=memory_pod(memory / 4))
    try:
        low.kompi("up")
        stack = Stack(node_kubectl, real_cluster, "ompi4", namespace, workers=1)
        stack.every_worker_ready()
        selector = f"app.kubernetes.io/instance={namespace}"
        first = {pod["metadata"]["uid"] for pod in node_kubectl.items("pods", namespace, selector)}
        assert len(first) == 2
        job = Job(stack, tmp_path / "job.log")
        job.wait_running()

        preempted = time.monotonic()
        high.kompi("up")  # admitted once Kueue has preempted the lower-priority cluster
        ending = job.end(preempted)
        print(f"the preempted cluster's job: {ending}")
        assert ending.code not in (None, 0), f"{ending}\n{ending.output}"

        def remade_and_gated() -> bool:
            pods = node_kubectl.items("pods", namespace, selector)
            return len(pods) == 2 and all(
                gated(pod) and not pod["spec"].get("nodeName") and pod["metadata"]["uid"] not in first for pod in pods
            )

        wait_until("the preempted cluster's pods made again, gated", remade_and_gated, 120)

        high.kompi("destroy")  # the quota is free: Kueue admits the waiting group by itself
        stack.every_worker_ready()  # Ready, and the master's new hostfile lists the worker
        hosts = hostfile_hosts(node_kubectl, namespace, stack.master)
        assert len(hosts) == 1 and hosts[0].startswith(stack.worker(0)), hosts
        allreduce(node_kubectl, namespace, stack.master, 1)
    finally:
        node_kubectl.run("delete", "workloadpriorityclass.kueue.x-k8s.io", "urgent", check=False)
