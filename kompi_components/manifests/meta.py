"""Object metadata shared by every builder."""

from __future__ import annotations

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

# An annotation kompi reads when it creates the object: Pulumi keeps the object on `pulumi destroy`
# (resource option retain_on_delete). It stays on the object so that kubectl users see it too.
RETAIN_ON_DELETE = "kompi/retain-on-delete"


def retained_on_delete(manifest: Manifest) -> bool:
    annotations = manifest.get("metadata", {}).get("annotations") or {}
    return annotations.get(RETAIN_ON_DELETE) == "true"
