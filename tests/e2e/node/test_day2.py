"""Day 2 on a real node: a kompi upgrade and an image change on a cluster whose workers hold data.

Four workers, each with its own claim (hostPath volumes on the node stand in for a provisioner), each
writing a file to it. Then kompi is upgraded (same checkout, another version): nothing restarts, no
claim changes. Then the image changes from Open MPI 4 to 5: every pod is replaced at once, `up`
returns with all of them Ready on the new image, the claims and their files are the same, and a job
runs over every worker.
"""

from __future__ import annotations

import datetime
import itertools
import os
from pathlib import Path
from typing import Any

from kompi_components.kube.conditions import true_condition
from tests.e2e.live import Kubectl
from tests.e2e.node.mpi import exec_in
from tests.e2e.node.volumes import host_volume
from tests.e2e.project import Project
from tests.e2e.upgrade import kompi_as

WORKERS = 4
SCRATCH = "/scratch"


def worker_volumes(kubectl: Kubectl, root: Path, storage_class: str) -> list[str]:
    """One volume per worker, for the claims the StatefulSet makes from its template."""
    names = [f"{storage_class}-{index}" for index in range(WORKERS)]
    for index, name in enumerate(names):
        host_volume(kubectl, root / f"worker-{index}", name, storage_class)
    return names


def uids(kubectl: Kubectl, namespace: str, kind: str) -> dict[str, str]:
    return {item["metadata"]["name"]: item["metadata"]["uid"] for item in kubectl.items(kind, namespace)}


def created_and_ready(pod: dict[str, Any]) -> tuple[datetime.datetime, datetime.datetime]:
    ready = true_condition(pod, "Ready")
    assert ready is not None, f"{pod['metadata']['name']} is not Ready"
    stamps = pod["metadata"]["creationTimestamp"], ready["lastTransitionTime"]
    return datetime.datetime.fromisoformat(stamps[0]), datetime.datetime.fromisoformat(stamps[1])


def one_at_a_time(pods: list[dict[str, Any]]) -> bool:
    """Whether each pod, in the order they were created, was created only once the one before was Ready:
    what a rollout that waits for each pod does (timed by the pods themselves, so a loaded machine that
    starts every pod slower still tells the two apart)."""
    timeline = sorted(created_and_ready(pod) for pod in pods)
    return all(created >= ready_before for (_, ready_before), (created, _) in itertools.pairwise(timeline))


def on_every_worker(kubectl: Kubectl, namespace: str, master: str, script: str) -> list[str]:
    """``script`` once on each worker through mpiexec from the master; its output lines, sorted."""
    out = exec_in(kubectl, namespace, master, "mpiexec", "-n", str(WORKERS), "sh", "-c", script, timeout=180)
    return sorted(out.split())


def test_an_upgrade_and_an_image_change_keep_every_claim_and_roll_all_pods_at_once(
    node_project, node_kubectl: Kubectl, images: dict[str, str], tmp_path: Path
) -> None:
    storage_class = f"kompi-day2-{os.getpid()}"
    volumes = worker_volumes(node_kubectl, tmp_path / "volumes", storage_class)
    try:
        project: Project = node_project(
            "dev",
            images["ompi4"].split(":", 1)[1],
            workers=WORKERS,
            workerVolume={"size": "1Gi", "storageClassName": storage_class, "mountPath": SCRATCH},
        )
        out = project.last_json(project.kompi("up"))
        namespace, master = project.config()["kompi:namespace"], out["masterPod"]
        written = on_every_worker(node_kubectl, namespace, master, f"hostname | tee {SCRATCH}/owner")
        assert written == [f"kompi-dev-worker-{index}" for index in range(WORKERS)]
        claims, statefulsets = uids(node_kubectl, namespace, "pvc"), uids(node_kubectl, namespace, "statefulsets")
        pods = uids(node_kubectl, namespace, "pods")
        assert len(claims) == WORKERS

        # a kompi upgrade: labels change in place, nothing restarts
        kompi_as(project, "99.0.0", "up")
        assert uids(node_kubectl, namespace, "pvc") == claims
        assert uids(node_kubectl, namespace, "statefulsets") == statefulsets
        assert uids(node_kubectl, namespace, "pods") == pods
        labels: dict[str, Any] = node_kubectl.get("statefulset", "kompi-dev-worker", namespace)["metadata"]["labels"]  # type: ignore[index]
        assert labels["app.kubernetes.io/version"] == "99.0.0"

        # a new image: every pod replaced at once, up returns when all are Ready on it
        project.set(imageTag=images["ompi5"].split(":", 1)[1])
        project.kompi("up")
        live = node_kubectl.items("pods", namespace)
        assert {pod["spec"]["containers"][0]["image"] for pod in live} == {images["ompi5"]}
        assert not set(pods.values()) & {pod["metadata"]["uid"] for pod in live}, "a pod of the old image is left"
        # all at once: the workers were not replaced one after the other
        workers = [pod for pod in live if pod["metadata"]["name"].startswith("kompi-dev-worker-")]
        assert len(workers) == WORKERS
        assert not one_at_a_time(workers), f"workers replaced one at a time: {sorted(map(created_and_ready, workers))}"
        assert uids(node_kubectl, namespace, "pvc") == claims
        assert uids(node_kubectl, namespace, "statefulsets") == statefulsets
        # each worker finds the file it wrote before, and the job runs over every worker on Open MPI 5
        check = f'test "$(cat {SCRATCH}/owner)" = "$(hostname)" && ompi_info --version | head -1 | tr " " _'
        assert on_every_worker(node_kubectl, namespace, master, check) == ["Open_MPI_v5.0.11"] * WORKERS
    finally:
        for name in volumes:
            node_kubectl.run("delete", "pv", name, "--wait=false", check=False)
