"""Object metadata shared by every builder."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kompi_components.naming import Names

Manifest = dict[str, Any]


def metadata(names: Names, name: str, component: str | None = None) -> dict[str, Any]:
    return {"name": name, "namespace": names.namespace, "labels": names.labels(component)}


def manifest(api_version: str, kind: str, meta: dict[str, Any], **fields: Any) -> Manifest:
    return {"apiVersion": api_version, "kind": kind, "metadata": meta, **fields}


# pulumi-kubernetes does not wait for an object with this annotation to become ready (nor, for some
# kinds, StatefulSets among them, to be gone when it deletes one).
SKIP_AWAIT = "pulumi.com/skipAwait"
# pulumi-kubernetes waits for this condition instead of its own readiness check (create and update
# only: a deletion is still waited for).
WAIT_FOR = "pulumi.com/waitFor"

# How pulumi-kubernetes deletes an object: "background" returns once the object is gone and leaves its
# dependents (pods, claims) to the garbage collector instead of waiting for them.
DELETION_PROPAGATION = "pulumi.com/deletionPropagationPolicy"

# Set on a claim that `pulumi destroy` leaves in the cluster (ObjectOptions.retain_on_delete), for kubectl
# users to see; nothing reads it back.
RETAIN_ON_DELETE = "kompi/retain-on-delete"


@dataclass(frozen=True)
class ObjectOptions:
    """How Pulumi treats one object, decided where the object is built (kompi_components.components applies it)."""

    retain_on_delete: bool = False  # `pulumi destroy` (or a replacement) forgets the object and leaves it
    ignore_changes: tuple[str, ...] = ()  # fields someone else owns once the object exists
    # A replacement deletes the old object first: its name is fixed, and `up --replace` of an unchanged object
    # would otherwise create the new one beside the old (a server-side apply conflict on the same name).
    delete_before_replace: bool = False


@dataclass(frozen=True)
class PlannedObject:
    """One object kompi plans for a cluster: its manifest and the Pulumi options it is created with."""

    manifest: Manifest
    options: ObjectOptions = ObjectOptions()
