"""kompi's job modes on a real node: the one-shot Job (queued in Kueue, and not), and the data stack's preparation
Job."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from kompi_components.kube.conditions import has_condition
from kompi_components.manifests import queue
from kompi_engine.cluster.kueue import API, CLUSTER_QUEUE
from tests.e2e.live import Kubectl, pods_ready, wait_until
from tests.e2e.node.mpi import PROGRAM, exec_in
from tests.e2e.node.volumes import host_volume
from tests.e2e.project import Project


def job_pod(kubectl: Kubectl, namespace: str, job: str) -> dict[str, Any]:
    pods = kubectl.items("pods", namespace, f"job-name={job}")
    assert pods, f"no pod of job {job}"
    return max(pods, key=lambda pod: pod["metadata"]["creationTimestamp"])


def termination_message(pod: dict[str, Any]) -> str:
    for status in pod["status"].get("containerStatuses", []):
        if status["name"] == "mpi":
            return str(status.get("state", {}).get("terminated", {}).get("message", ""))
    return ""


def job_finished(kubectl: Kubectl, namespace: str, job: str) -> bool:
    status = (kubectl.get("job", job, namespace) or {}).get("status", {})
    return bool(status.get("succeeded") or status.get("failed"))


def test_one_shot_in_a_kueue_queue_runs_once_after_admission_releases_the_workers_and_its_quota(
    stack_namespace, node_project, node_kubectl: Kubectl, images
) -> None:
    """The one-shot run, queued: Kueue (beside the real node, its ClusterQueue the node's CPUs and memory)
    admits the Job's pod and the workers as one group; the job runs once across them, keeps its exit code,
    releases the workers, and the group's Workload is then Finished, its quota given back; a second run
    (another command) does the same in a group of its own."""
    namespace = stack_namespace("kompi-queued")
    local_queue = {"apiVersion": API, "kind": "LocalQueue", "metadata": {"name": "team", "namespace": namespace},
                   "spec": {"clusterQueue": CLUSTER_QUEUE}}  # fmt: skip
    node_kubectl.run("apply", "-f", "-", input_text=json.dumps(local_queue))
    command = ["mpiexec", "-n", "2", "python3", "-c", PROGRAM]
    one_shot = {"enabled": True, "command": command, "timeoutSeconds": 300}
    project: Project = node_project(
        "dev", images["ompi4"].split(":", 1)[1], namespace=namespace, createNamespace=False, queue="team",
        oneShot=one_shot,
    )  # fmt: skip
    project.kompi("up")
    job = "kompi-dev-master"
    wait_until("the one-shot Job finished", lambda: job_finished(node_kubectl, namespace, job), 300)
    assert node_kubectl.get("job", job, namespace)["status"].get("succeeded") == 1  # type: ignore[index]
    logs = node_kubectl.run("logs", "-n", namespace, f"job/{job}", "-c", "mpi").stdout
    sums = [line for line in logs.splitlines() if '"sum": 3' in line]
    assert len(sums) == 2, logs  # both ranks, once
    ran = job_pod(node_kubectl, namespace, job)
    assert termination_message(ran).startswith("exit code 0:")
    group = ran["metadata"]["labels"][queue.GROUP_LABEL]
    # released with its own scoped Role: the StatefulSet is scaled to 0 and its pods are gone
    wait_until(
        "workers released",
        lambda: (
            node_kubectl.get("statefulset", "kompi-dev-worker", namespace)["spec"]["replicas"] == 0  # type: ignore[index]
            and not node_kubectl.items("pods", namespace, "app.kubernetes.io/component=worker")
        ),
        120,
    )
    _ran_as_one_group_and_finished(node_kubectl, namespace, group)

    # A new run (another command): a group of its own, since Kueue admits no pod into the Finished one, and
    # the workers its Job released are scaled back by `up` (the new Job's pod, gated, cannot).
    project.set(oneShot=one_shot | {"command": ["mpiexec", "-n", "2", "-x", "KOMPI_TEST_RUN=2", *command[3:]]})
    project.kompi("up")
    wait_until("the second run finished", lambda: job_finished(node_kubectl, namespace, job), 300)
    assert node_kubectl.get("job", job, namespace)["status"].get("succeeded") == 1  # type: ignore[index]
    logs = node_kubectl.run("logs", "-n", namespace, f"job/{job}", "-c", "mpi").stdout
    assert len([line for line in logs.splitlines() if '"sum": 3' in line]) == 2, logs
    second = job_pod(node_kubectl, namespace, job)["metadata"]["labels"][queue.GROUP_LABEL]
    assert second != group
    _ran_as_one_group_and_finished(node_kubectl, namespace, second)
    # the first run's Workload is deleted by the workers' roll (the StatefulSet owns it)
    wait_until("the first run's Workload deleted", lambda: not node_kubectl.get(WORKLOAD, group, namespace), 60)


WORKLOAD = "workloads.kueue.x-k8s.io"


def _ran_as_one_group_and_finished(kubectl: Kubectl, namespace: str, group: str) -> None:
    """Admitted as one group (the Job's pod and both workers), and Finished once none of its pods runs."""
    workload = kubectl.get(WORKLOAD, group, namespace) or {}
    assert sorted(pod_set["count"] for pod_set in workload["spec"]["podSets"]) == [1, 2], workload
    wait_until(
        "the group's Workload Finished",
        lambda: has_condition(kubectl.get(WORKLOAD, group, namespace) or {}, "Finished"),
        120,
    )


def test_a_failing_one_shot_keeps_its_exit_code_and_the_workers(node_project, node_kubectl: Kubectl, images) -> None:
    """A command that always fails: started again kompi:oneShot.restarts times (1 here), then the Job Fails
    with the last exit code and the budget named (#46)."""
    project: Project = node_project(
        "dev",
        images["ompi4"].split(":", 1)[1],
        oneShot={"enabled": True, "command": ["sh", "-c", "exit 3"], "timeoutSeconds": 300, "restarts": 1},
    )
    project.kompi("up")
    namespace, job = project.config()["kompi:namespace"], "kompi-dev-master"
    wait_until("a failed one-shot pod", lambda: termination_message(job_pod(node_kubectl, namespace, job)) != "", 300)
    message = termination_message(job_pod(node_kubectl, namespace, job))
    assert message.startswith("exit code 3: command failed after 1 restart (kompi:oneShot.restarts = 1, spent)")
    wait_until("the Job Failed", lambda: job_finished(node_kubectl, namespace, job), 60)
    assert node_kubectl.get("job", job, namespace)["status"].get("failed") == 1  # type: ignore[index]
    assert node_kubectl.get("statefulset", "kompi-dev-worker", namespace)["spec"]["replicas"] == 2  # type: ignore[index]


PREPARE = (
    "set -e; cd /datasets; for shard in 0 1 2 3; do head -c 1048576 /dev/urandom > shard-$shard.bin; done; "
    "sha256sum shard-*.bin > SHA256SUMS"
)


def test_the_preparation_job_writes_the_shared_claim_and_the_mpi_job_reads_it(
    node_project, node_kubectl: Kubectl, images, tmp_path: Path
) -> None:
    storage_class = f"kompi-node-test-{os.getpid()}"
    host_volume(node_kubectl, tmp_path / "shared", f"kompi-data-{os.getpid()}", storage_class)
    try:
        project: Project = node_project(
            "data",
            images["ompi4"].split(":", 1)[1],
            workers=2,
            appCode=[],
            dataVolumes=[{"name": "train", "size": "1Gi", "storageClassName": storage_class, "mountPath": "/datasets"}],
            dataPreparation={"command": ["sh", "-c", PREPARE], "activeDeadlineSeconds": 300},
        )
        master = project.last_json(project.kompi("up"))["masterPod"]
        namespace = project.config()["kompi:namespace"]
        wait_until("every pod Ready", lambda: pods_ready(node_kubectl, namespace), 120)
        # the files really are on the volume, as the preparation Job wrote them
        written = {
            line.split()[1]: line.split()[0] for line in (tmp_path / "shared" / "SHA256SUMS").read_text().splitlines()
        }
        for name, digest in written.items():
            assert hashlib.sha256((tmp_path / "shared" / name).read_bytes()).hexdigest() == digest
        # every rank, on its own worker pod, reads them and checks every checksum
        check = "cd /datasets && sha256sum --check --quiet SHA256SUMS && echo verified-on-$(hostname)"
        out = exec_in(node_kubectl, namespace, master, "mpiexec", "-n", "2", "sh", "-c", check)
        assert sorted(out.split()) == ["verified-on-kompi-data-worker-0", "verified-on-kompi-data-worker-1"]
    finally:
        node_kubectl.run("delete", "pv", f"kompi-data-{os.getpid()}", "--wait=false", check=False)
