"""An upgrade from the kompi before the component API: the same stack, the same cluster, nothing replaced.

The component prefixes every object's Pulumi name with its resource name; stacks made before carry the old
names over by aliases. A stack made by that kompi (its own checkout, from git) and then updated by this one
must keep every object: the preview lists no delete or replace, and claims, StatefulSets and pods
keep their UIDs.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.e2e.live import Kubectl
from tests.e2e.project import Project
from tests.e2e.upgrade import checkout, earlier_kompi

# The last landed commit before the component API (object names were <kind>-<name>, no component prefix).
BEFORE = "0af856edf855680075f5f8ebefecb7f199bcb72d"


@pytest.fixture(scope="module")
def before(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return checkout(BEFORE, tmp_path_factory.mktemp("kompi-before"))


def _old_kompi(tree: Path, project: Project, operation: str) -> subprocess.CompletedProcess[str]:
    return earlier_kompi(tree, project, operation, module="kompi_components")


def _uids(kubectl: Kubectl, namespace: str) -> dict[str, dict[str, str]]:
    kinds = ("statefulsets", "pvc", "pods", "secrets", "services", "jobs")
    return {
        kind: {i["metadata"]["name"]: i["metadata"]["uid"] for i in kubectl.items(kind, namespace)} for kind in kinds
    }


def test_an_upgrade_keeps_every_object_of_a_stack_made_before_the_component_api(
    before: Path, project_factory, kubectl: Kubectl
) -> None:
    project: Project = project_factory("dev")
    project.set(
        workerVolume={"size": "1Gi", "mountPath": "/scratch"},
        dataVolumes=[{"name": "shared", "size": "1Gi", "mountPath": "/shared"}],
        dataPreparation={"command": ["true"]},
    )
    _old_kompi(before, project, "up")
    namespace = project.config()["kompi:namespace"]
    made = _uids(kubectl, namespace)
    assert made["pvc"] and made["statefulsets"] and made["jobs"]

    preview = project.last_json(project.kompi("preview"))
    # that kompi had no rollout steps yet: they are created (and the StatefulSets they roll updated); no Kubernetes
    # object is deleted or replaced
    assert not set(preview) & {"delete", "replace", "create-replacement", "delete-replaced"}, preview
    project.kompi("up")
    # its pod template differs from this kompi's, so the pods roll once; every other object is the same one
    after = _uids(kubectl, namespace)
    assert {kind: uids for kind, uids in after.items() if kind != "pods"} == {
        kind: uids for kind, uids in made.items() if kind != "pods"
    }
    assert set(project.last_json(project.kompi("preview"))) == {"same"}
