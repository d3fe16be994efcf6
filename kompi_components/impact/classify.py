"""Compare two renders of a stack and say what applying the second does to the first's live cluster."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from kompi_components.manifests.meta import Manifest, PlannedObject


class Impact(enum.IntEnum):
    """From harmless to harmful; a change's impact is the worst of its objects'."""

    NOTHING = 0
    IN_PLACE = 1
    ROLLS_PODS = 2
    REPLACES = 3
    DELETES_DATA = 4

    @property
    def label(self) -> str:
        return _LABELS[self]


_LABELS = {
    Impact.NOTHING: "nothing",
    Impact.IN_PLACE: "updates objects in place",
    Impact.ROLLS_PODS: "rolls the pods",
    Impact.REPLACES: "replaces an object",
    Impact.DELETES_DATA: "deletes data",
}

# Fields that pulumi-kubernetes replaces the object for when they change (the forceNew table of the
# provider release the tests run, 4.25.0, which follows what the API server refuses to update), besides
# metadata.name and namespace. A claim's size is not among them: the API server grows a claim in place
# where its storage class allows expansion, and refuses the change (failing `up`) elsewhere.
# Objects are matched by kind, namespace and name, so a new name shows as a delete and a create.
REPLACED_WHEN_CHANGED: dict[str, tuple[str, ...]] = {
    "StatefulSet": (
        "spec.podManagementPolicy",
        "spec.revisionHistoryLimit",
        "spec.selector",
        "spec.serviceName",
        "spec.volumeClaimTemplates",
    ),
    "Job": ("spec.completions", "spec.parallelism", "spec.selector", "spec.template"),
    "PersistentVolumeClaim": ("spec.accessModes", "spec.selector", "spec.storageClassName", "spec.volumeName"),
    "Secret": ("type", "data", "stringData"),
    "Service": ("spec.clusterIP",),
    "RoleBinding": ("roleRef",),
}
# Kinds whose pods run from spec.template; a new template restarts them.
POD_OWNERS = ("StatefulSet", "Job")


@dataclass(frozen=True)
class ObjectChange:
    kind: str
    name: str
    impact: Impact
    why: str

    def __str__(self) -> str:
        return f"{self.kind} {self.name}: {self.why}"


def get_path(manifest: Manifest, path: str) -> Any:
    """The value at a dotted ``path`` (None where any part is missing)."""
    value: Any = manifest
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value


def _identity(manifest: Manifest) -> tuple[str, str, str]:
    meta = manifest["metadata"]
    return manifest["kind"], meta.get("namespace", ""), meta["name"]


def holds_claims(item: PlannedObject) -> bool:
    """Deleting this object deletes claims: a kompi-owned claim Pulumi does not retain, or a StatefulSet whose
    claims go with it."""
    manifest = item.manifest
    if item.options.retain_on_delete:
        return False
    if manifest["kind"] == "PersistentVolumeClaim":
        return True
    if manifest["kind"] == "StatefulSet" and get_path(manifest, "spec.volumeClaimTemplates"):
        policy = get_path(manifest, "spec.persistentVolumeClaimRetentionPolicy.whenDeleted")
        return bool(policy == "Delete")
    return False


def _removed(item: PlannedObject, why: str) -> ObjectChange:
    kind, name = item.manifest["kind"], item.manifest["metadata"]["name"]
    if holds_claims(item):
        return ObjectChange(kind, name, Impact.DELETES_DATA, f"{why}, and its claims with it")
    if kind in POD_OWNERS:
        return ObjectChange(kind, name, Impact.REPLACES, f"{why}, and its pods with it")
    return ObjectChange(kind, name, Impact.IN_PLACE, why)


def _changed_paths(before: Any, after: Any, prefix: str = "", depth: int = 2) -> Iterator[str]:
    """Where two objects differ, down to ``depth`` levels (enough to say which part changed)."""
    if before == after:
        return
    if depth == 0 or not (isinstance(before, dict) and isinstance(after, dict)):
        yield prefix or "(whole object)"
        return
    for key in sorted(before.keys() | after.keys()):
        yield from _changed_paths(before.get(key), after.get(key), f"{prefix}.{key}" if prefix else key, depth - 1)


def _updated(old: PlannedObject, new: PlannedObject) -> ObjectChange | None:
    before, after = old.manifest, new.manifest
    if before == after:
        return None
    kind, name = after["kind"], after["metadata"]["name"]
    forced = [path for path in REPLACED_WHEN_CHANGED.get(kind, ()) if get_path(before, path) != get_path(after, path)]
    if forced:
        why = f"{', '.join(forced)} changed: replaced"
        if holds_claims(old):
            return ObjectChange(kind, name, Impact.DELETES_DATA, f"{why}, and its claims deleted")
        return ObjectChange(kind, name, Impact.REPLACES, why)
    if kind in POD_OWNERS and get_path(before, "spec.template") != get_path(after, "spec.template"):
        return ObjectChange(kind, name, Impact.ROLLS_PODS, "spec.template changed: every pod restarts")
    return ObjectChange(kind, name, Impact.IN_PLACE, f"{', '.join(_changed_paths(before, after))} updated")


def compare(before: Iterable[PlannedObject], after: Iterable[PlannedObject]) -> list[ObjectChange]:
    """Each object that differs, with what the difference does to it."""
    old = {_identity(item.manifest): item for item in before}
    new = {_identity(item.manifest): item for item in after}
    changes = [_removed(item, "deleted") for key, item in old.items() if key not in new]
    changes += [
        ObjectChange(item.manifest["kind"], item.manifest["metadata"]["name"], Impact.IN_PLACE, "created")
        for key, item in new.items()
        if key not in old
    ]
    changes += [change for key in old.keys() & new.keys() if (change := _updated(old[key], new[key]))]
    return sorted(changes, key=lambda change: (-change.impact, change.kind, change.name))


def impact_of(changes: Iterable[ObjectChange]) -> Impact:
    return max((change.impact for change in changes), default=Impact.NOTHING)
