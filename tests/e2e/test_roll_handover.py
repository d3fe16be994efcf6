"""kompi's StatefulSets are OnDelete: their controller never rolls a pod by itself, kompi's rollout step replaces them
all at once. A cluster made by the kompi before (RollingUpdate, the API server's default) is handed over by the
next `up`: its preview deletes and replaces nothing, and no pod restarts.

Under RollingUpdate the controller began its own roll, one pod after the other, as soon as a template changed; on
a loaded machine it had rolled every pod before kompi's step ran (tests/e2e/node/test_day2.py saw it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.live import Kubectl, wait_until
from tests.e2e.project import Project
from tests.e2e.upgrade import checkout, earlier_kompi

# The last kompi whose StatefulSets kept the default RollingUpdate.
BEFORE = "599c8dea4d4787646e60d1f01152537376d644a9"
ROLES = ("master", "worker")


@pytest.fixture(scope="module")
def before(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return checkout(BEFORE, tmp_path_factory.mktemp("kompi-599c8de"))


def _statefulset(kubectl: Kubectl, namespace: str, role: str) -> dict[str, Any]:
    found = kubectl.get("statefulset", f"kompi-dev-{role}", namespace)
    assert found is not None, f"no {role} StatefulSet"
    return found


def _pods(kubectl: Kubectl, namespace: str) -> dict[str, str]:
    """Pod name -> UID, of the pods that are not going away."""
    pods = kubectl.items("pods", namespace)
    return {
        pod["metadata"]["name"]: pod["metadata"]["uid"] for pod in pods if "deletionTimestamp" not in pod["metadata"]
    }


def _observed(statefulset: dict[str, Any]) -> bool:
    return bool(statefulset["status"].get("observedGeneration", 0) >= statefulset["metadata"]["generation"])


def test_a_cluster_of_the_kompi_before_is_handed_over_in_place_and_its_controller_rolls_nothing(
    before: Path, project_factory, kubectl: Kubectl
) -> None:
    project: Project = project_factory("dev")
    project.set(workers=4)
    earlier_kompi(before, project, "up")
    namespace = project.config()["kompi:namespace"]
    for role in ROLES:
        strategy = _statefulset(kubectl, namespace, role)["spec"]["updateStrategy"]
        assert strategy == {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}, strategy
    pods = _pods(kubectl, namespace)
    assert len(pods) == 5

    preview = project.last_json(project.kompi("preview"))
    # a handover step for each StatefulSet is created, and the StatefulSets updated; nothing deleted or replaced
    assert preview.get("create") == 2 and not set(preview) - {"same", "create", "update"}, preview
    project.kompi("up")
    for role in ROLES:
        assert _statefulset(kubectl, namespace, role)["spec"]["updateStrategy"] == {"type": "OnDelete"}
    assert _pods(kubectl, namespace) == pods, "the handover restarted pods"
    assert set(project.last_json(project.kompi("preview"))) == {"same"}

    # A template changed behind kompi's back (kubectl edit): the controller takes up the new revision and replaces
    # no pod. (Under RollingUpdate it deletes the highest ordinal in the same pass that records the generation.)
    edit = {"spec": {"template": {"metadata": {"annotations": {"kompi-test/edited": "yes"}}}}}
    kubectl.run("patch", "statefulset", "kompi-dev-worker", "-n", namespace, "--type=merge", "-p", json.dumps(edit))
    wait_until("the edit observed", lambda: _observed(_statefulset(kubectl, namespace, "worker")), 30)
    status = _statefulset(kubectl, namespace, "worker")["status"]
    assert status["updateRevision"] != status["currentRevision"], status
    assert _pods(kubectl, namespace) == pods, "the StatefulSet controller replaced pods by itself"

    # kompi's own roll replaces every pod
    project.set(imageTag="5.0.11-bookworm-0.1.0")
    project.kompi("up")
    live = kubectl.items("pods", namespace)
    assert len(live) == 5 and not set(pods.values()) & {pod["metadata"]["uid"] for pod in live}
    assert {pod["spec"]["containers"][0]["image"].rsplit(":", 1)[1] for pod in live} == {"5.0.11-bookworm-0.1.0"}
