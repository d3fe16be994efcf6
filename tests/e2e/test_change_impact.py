"""docs/changes.md against a live cluster: one change of each class applied to a running stack.

Each test makes a cluster from the table's own base stack (on kwok: no shared claim it cannot make, a
namespace of its own), applies one of the table's examples with `kompi up` and compares what happened
(the preview's counts, the UIDs of StatefulSets, Jobs, claims and pods before and after) with the class
the table gives that example for the same base.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from kompi_components.impact import Impact, impact_of
from kompi_components.impact.table import BASE, EXAMPLES, Example, changes_of
from tests.e2e.live import Kubectl
from tests.e2e.project import Project
from tests.e2e.upgrade import kompi_as

SHARED_CLAIM = "datasets"
# (key, change) of the table's examples checked here: at least one of each class, and the kompi upgrade.
CHECKED = [
    ("kompi version", "upgrade kompi (the stack pins its imageTag)"),
    ("sharedClaims[0].accessMode", '-> `"ReadWriteMany"`'),
    ("workers", "-> `3`"),
    ("workerPod.annotations", '-> `{"example.com/team": "ml"}`'),
    ("imageTag", '-> `"5.0.11-bookworm-0.1.0"`'),
    ("workerVolume.size", '-> `"20Gi"`'),
    ("dataVolumes[0].name", '-> `"train2"`'),
]


def _example(key: str, change: str) -> Example:
    (example,) = [e for e in EXAMPLES if (e.key, e.change) == (key, change)]
    return example


def _base(namespace: str) -> dict[str, Any]:
    # The shared claim must exist before its pods schedule, so the test makes the namespace and the claim.
    return BASE | {"namespace": namespace, "createNamespace": False}


def _write_stack(project: Project, values: dict[str, Any]) -> None:
    """The stack file holds exactly ``values`` (as the user's whole config)."""
    settings = yaml.safe_load(project.stack_file.read_text())
    settings["config"] = {f"kompi:{key}": value for key, value in values.items()}
    project.stack_file.write_text(yaml.safe_dump(settings, sort_keys=False))


def _up(project: Project, version: str | None = None) -> None:
    if version is None:
        project.kompi("up")
    else:
        kompi_as(project, version, "up")


# pulumi-kubernetes 4.25 previews the replacement of a named object by a server-side dry run against the
# object that still exists, which the API server refuses for a StatefulSet (`up` replaces it all right).
REPLACEMENT_PREVIEW_REFUSED = "create replacement"


def _preview(project: Project, version: str | None) -> dict[str, int]:
    if version is not None:
        return project.last_json(kompi_as(project, version, "preview"))
    result = project.kompi("preview", check=False)
    if result.returncode != 0:
        assert REPLACEMENT_PREVIEW_REFUSED in result.stdout, result.stdout[-3000:]
        return {"replace": 1}
    return project.last_json(result)


def _uids(kubectl: Kubectl, namespace: str, kind: str) -> dict[str, str]:
    return {item["metadata"]["name"]: item["metadata"]["uid"] for item in kubectl.items(kind, namespace)}


def _snapshot(kubectl: Kubectl, namespace: str) -> dict[str, dict[str, str]]:
    return {kind: _uids(kubectl, namespace, kind) for kind in ("statefulsets", "jobs", "pvc", "pods")}


def _mpi_pods(uids: dict[str, str]) -> dict[str, str]:
    return {name: uid for name, uid in uids.items() if "-master-" in name or "-worker-" in name}


def _observed(before: dict[str, dict[str, str]], after: dict[str, dict[str, str]], preview: dict[str, int]) -> Impact:
    """The worst thing that happened, in the table's classes."""
    if any(after["pvc"].get(name) != uid for name, uid in before["pvc"].items()):
        return Impact.DELETES_DATA
    owners = [(before[kind], after[kind]) for kind in ("statefulsets", "jobs")]
    if preview.get("replace", 0) or any(old.get(n) != new.get(n) for old, new in owners for n in old):
        return Impact.REPLACES
    old_pods, new_pods = _mpi_pods(before["pods"]), _mpi_pods(after["pods"])
    if any(new_pods.get(name) != uid for name, uid in old_pods.items() if name in new_pods):
        return Impact.ROLLS_PODS
    if any(preview.get(step, 0) for step in ("update", "create", "delete")):
        return Impact.IN_PLACE
    return Impact.NOTHING


@pytest.mark.parametrize(("key", "change"), CHECKED, ids=[f"{key} {change}" for key, change in CHECKED])
def test_a_change_does_what_the_table_says(project_factory, kubectl: Kubectl, key: str, change: str) -> None:
    example = _example(key, change)
    index = CHECKED.index((key, change))
    namespace = f"impact-{index}"
    base = _base(namespace)
    predicted = impact_of(changes_of(example, base))

    kubectl.run("create", "namespace", namespace)
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": SHARED_CLAIM, "namespace": namespace},
        "spec": {"accessModes": ["ReadOnlyMany"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    kubectl.run("apply", "-f", "-", input_text=json.dumps(claim))
    project: Project = project_factory("dev")
    try:
        _write_stack(project, example.before(base))
        _up(project)
        before = _snapshot(kubectl, namespace)
        assert before["pvc"], "the base stack has claims to lose"

        # a change that deletes claims needs the stack's leave (test_a_change_that_deletes_claims_is_refused)
        allowed = {"allowDataLoss": True} if predicted is Impact.DELETES_DATA else {}
        _write_stack(project, example.after(base) | allowed)
        preview = _preview(project, example.version)
        _up(project, example.version)
        after = _snapshot(kubectl, namespace)

        assert _observed(before, after, preview) is predicted, f"preview {preview}\nbefore {before}\nafter {after}"
        if predicted < Impact.DELETES_DATA:
            kept = {name: after["pvc"].get(name) for name in before["pvc"]}
            assert kept == before["pvc"], "every claim must keep its UID"
    finally:
        project.kompi("destroy", check=False)
        kubectl.run("delete", "namespace", namespace, "--wait=false", check=False)


def test_a_change_that_deletes_claims_is_refused_before_anything_changes(project_factory, kubectl: Kubectl) -> None:
    namespace = "impact-refused"
    base = BASE | {"namespace": namespace, "sharedClaims": []}
    project: Project = project_factory("dev")
    try:
        _write_stack(project, base)
        _up(project)
        before = _snapshot(kubectl, namespace)
        _write_stack(project, base | {"workerVolume": {"size": "20Gi", "mountPath": "/scratch"}})
        for operation in ("preview", "up"):
            result = project.kompi(operation, check=False)
            assert result.returncode == 1, result.stdout[-2000:]
            last = result.stderr.strip().splitlines()[-1]
            assert (
                "refused: this change deletes claims and their data: StatefulSet impact-refused/team-worker would "
                in last
            )
            assert (
                "be replaced (spec.volumeClaimTemplates changed). If you mean it, set kompi:allowDataLoss: true" in last
            )
        assert _snapshot(kubectl, namespace) == before  # nothing was touched
    finally:
        project.kompi("destroy", check=False)
