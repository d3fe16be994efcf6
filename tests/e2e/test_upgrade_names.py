"""An upgrade from the kompi before the component API: the same stack, the same cluster, nothing replaced.

The component prefixes every object's Pulumi name with its resource name; stacks made before carry the old
names over by aliases. A stack made by that kompi (its own checkout, from git) and then updated by this one
must keep every object: the preview lists no delete or replace, and claims, StatefulSets and pods
keep their UIDs.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.live import Kubectl
from tests.e2e.project import Project
from tests.stacks import REPO

# The last landed commit before the component API (object names were <kind>-<name>, no component prefix).
BEFORE = "0af856edf855680075f5f8ebefecb7f199bcb72d"


def _checkout(commit: str, into: Path) -> Path:
    """That commit's tree, read from the repository (no worktree: the shared checkout is left alone)."""
    archive = subprocess.run(["git", "archive", commit], cwd=REPO, capture_output=True, check=True).stdout
    # tar itself, not tarfile: extractall's filter= is missing from Debian's Python 3.11.2.
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


@pytest.fixture(scope="module")
def before(tmp_path_factory: pytest.TempPathFactory) -> Path:
    known = subprocess.run(["git", "cat-file", "-e", f"{BEFORE}^{{commit}}"], cwd=REPO, capture_output=True)
    assert known.returncode == 0, f"the repository lacks {BEFORE} (a shallow clone?): fetch its history"
    return _checkout(BEFORE, tmp_path_factory.mktemp("kompi-before"))


def _old_kompi(checkout: Path, project: Project, operation: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "kompi_components", operation, "--stack", project.stack]
    command += ["--dir", str(project.directory), "--yes"]
    env = {key: value for key, value in project.env.items() if key != "PYTHONPATH"}
    result = subprocess.run(command, cwd=checkout, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"old kompi {operation}:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


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
