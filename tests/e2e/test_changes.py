"""Changes through the real engine: scaling, key rotation, a new image, data preparation and its failure."""

from __future__ import annotations

import datetime
from typing import Any

from kompi_components.kube.api import pod_selector
from kompi_components.kube.conditions import is_ready
from kompi_components.kube.rollout import REVISION_LABEL
from tests.e2e.live import Kubectl, pods_ready, wait_until
from tests.e2e.project import Project, assert_live_equals_render

KEY_VERSION_ANNOTATION = "kompi.io/ssh-key-version"


def statefulset(kubectl: Kubectl, project: Project, role: str) -> dict[str, Any]:
    config = project.config()
    found = kubectl.get("statefulset", f"{config['kompi:clusterName']}-{role}", config["kompi:namespace"])
    assert found is not None, f"no {role} StatefulSet"
    return found


def rolled_out(kubectl: Kubectl, project: Project, role: str) -> bool:
    """Every replica exists, is Ready and runs the StatefulSet's current template (its pods' revision label; an
    OnDelete StatefulSet never moves status.currentRevision, so `kubectl rollout status` cannot say)."""
    found = statefulset(kubectl, project, role)
    revision, replicas = found["status"].get("updateRevision"), found["spec"]["replicas"]
    pods = kubectl.items("pods", found["metadata"]["namespace"], pod_selector(found))
    on_revision = [pod for pod in pods if pod["metadata"]["labels"].get(REVISION_LABEL) == revision]
    return len(pods) == len(on_revision) == replicas and all(is_ready(pod) for pod in pods)


def test_scaling_changes_the_workers_and_the_gang_only(project_factory, kubectl: Kubectl) -> None:
    project: Project = project_factory("dev")
    project.set(gangScheduling={"enabled": True, "mode": "pdb"})
    project.kompi("up")
    for workers in (4, 0, 2):
        project.set(workers=workers)
        preview = project.last_json(project.kompi("preview"))
        # the StatefulSet, the PDB, and the workers' rollout step (it waits for the new count)
        assert preview.get("update") == 3 and set(preview) == {"same", "update"}, preview
        project.kompi("up")
        assert statefulset(kubectl, project, "worker")["spec"]["replicas"] == workers
        pdb = kubectl.get("pdb", "kompi-dev", "kompi-dev")
        assert pdb is not None and pdb["spec"]["minAvailable"] == workers + 1  # the master belongs to the gang
        wait_until(
            f"{workers} workers ready",
            lambda workers=workers: (
                statefulset(kubectl, project, "worker")["status"].get("readyReplicas", 0) == workers
            ),
        )
        assert_live_equals_render(kubectl, project)


def test_key_rotation_replaces_the_secret_and_rolls_every_pod(project_factory, kubectl: Kubectl) -> None:
    project: Project = project_factory("dev")
    project.kompi("up")
    before = kubectl.get("secret", "kompi-dev-ssh", "kompi-dev")
    old_key = project.last_json(project.kompi("up"))["sshPublicKey"]

    project.set(sshKeyVersion=2)
    new_key = project.last_json(project.kompi("up"))["sshPublicKey"]

    after = kubectl.get("secret", "kompi-dev-ssh", "kompi-dev")
    assert before is not None and after is not None
    assert after["metadata"]["uid"] != before["metadata"]["uid"] and after["data"] != before["data"]
    assert new_key != old_key
    for role in ("master", "worker"):
        template = statefulset(kubectl, project, role)["spec"]["template"]
        assert template["metadata"]["annotations"][KEY_VERSION_ANNOTATION] == "2"
        wait_until(f"{role} pods on the new template", lambda role=role: rolled_out(kubectl, project, role), 120)


def test_a_new_image_tag_rolls_master_and_workers_at_once_before_up_returns(project_factory, kubectl: Kubectl) -> None:
    project: Project = project_factory("dev")
    project.set(workers=4)
    project.kompi("up")
    statefulsets = {role: statefulset(kubectl, project, role)["metadata"]["uid"] for role in ("master", "worker")}
    old_pods = {pod["metadata"]["uid"] for pod in kubectl.items("pods", "kompi-dev")}
    project.set(imageTag="5.0.11-bookworm-0.1.0")
    project.kompi("up")
    # `up` returned: every pod already runs the new template and is Ready (no waiting here)
    for role in ("master", "worker"):
        (container,) = statefulset(kubectl, project, role)["spec"]["template"]["spec"]["containers"]
        assert container["image"].endswith(":5.0.11-bookworm-0.1.0")
        assert rolled_out(kubectl, project, role), statefulset(kubectl, project, role)["status"]
        assert statefulset(kubectl, project, role)["metadata"]["uid"] == statefulsets[role]  # updated, not replaced
    pods = kubectl.items("pods", "kompi-dev")
    assert len(pods) == 5 and pods_ready(kubectl, "kompi-dev")
    assert {pod["spec"]["containers"][0]["image"].rsplit(":", 1)[1] for pod in pods} == {"5.0.11-bookworm-0.1.0"}
    assert not old_pods & {pod["metadata"]["uid"] for pod in pods}
    # all at once: one pod at a time, each waiting for the one before to be Ready, would spread them out
    created = sorted(datetime.datetime.fromisoformat(pod["metadata"]["creationTimestamp"]) for pod in pods)
    assert (created[-1] - created[0]).total_seconds() <= 2, created


def test_data_claims_bind_and_the_preparation_job_completes_before_any_mpi_pod(project_factory, kubectl) -> None:
    project: Project = project_factory("data")
    project.kompi("up")
    claims = kubectl.items("pvc", "kompi-data")
    assert claims and all(claim["status"]["phase"] == "Bound" for claim in claims)
    (job,) = kubectl.items("jobs", "kompi-data")
    assert job["status"].get("succeeded") == 1
    finished = job["status"]["completionTime"]
    wait_until("the MPI pods", lambda: pods_ready(kubectl, "kompi-data"), 90)
    mpi_pods = [pod for pod in kubectl.items("pods", "kompi-data") if "job-name" not in pod["metadata"]["labels"]]
    assert len(mpi_pods) == 5
    assert all(pod["metadata"]["creationTimestamp"] >= finished for pod in mpi_pods)


def test_a_failed_preparation_job_stops_up_before_any_mpi_pod(project_factory, kubectl) -> None:
    project: Project = project_factory("data")
    preparation = project.config()["kompi:dataPreparation"]
    # asks for more CPUs than any node has: never scheduled, so the Job fails at its deadline
    project.set(dataPreparation=preparation | {"activeDeadlineSeconds": 5, "resources": {"requests": {"cpu": "999"}}})

    result = project.kompi("up", check=False)

    assert result.returncode == 1
    assert "error: pulumi up failed" in result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        "error: pulumi up failed (details above): [DeadlineExceeded] Job was active longer than specified deadline"
    )
    assert kubectl.items("statefulsets", "kompi-data") == []
    assert [p for p in kubectl.items("pods", "kompi-data") if "job-name" not in p["metadata"]["labels"]] == []
