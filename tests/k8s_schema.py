"""Validation of rendered objects against the real Kubernetes OpenAPI schemas (strict: unknown fields fail)."""

from __future__ import annotations

from typing import Any

import jsonschema
import kubernetes_validate

KUBERNETES_VERSION = "1.37.0"

_QUANTITY = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
# PodGroups are custom resources, absent from the Kubernetes schemas: check the fields kompi sets
# against the CRDs' documented spec (minMember is an int32, unknown fields are refused).
_POD_GROUP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "additionalProperties": False,
    "properties": {
        "apiVersion": {"enum": ["scheduling.volcano.sh/v1beta1", "scheduling.x-k8s.io/v1alpha1"]},
        "kind": {"const": "PodGroup"},
        "metadata": {"type": "object", "required": ["name", "namespace"]},
        "spec": {
            "type": "object",
            "required": ["minMember"],
            "additionalProperties": False,
            "properties": {
                "minMember": {"type": "integer", "minimum": 1, "maximum": 2147483647},
                # map of resource name to quantity (both CRDs: int-or-string with the quantity pattern)
                "minResources": {"type": "object", "additionalProperties": {"type": "string", "pattern": _QUANTITY}},
            },
        },
    },
}


def validate(manifest: dict[str, Any]) -> None:
    """Raise with the object's kind/name and the schema's complaint when ``manifest`` is invalid."""
    name = f"{manifest.get('kind')}/{manifest.get('metadata', {}).get('name')}"
    try:
        if manifest.get("kind") == "PodGroup":
            jsonschema.validate(manifest, _POD_GROUP_SCHEMA)
        else:
            kubernetes_validate.validate(manifest, KUBERNETES_VERSION, strict=True)
    except (kubernetes_validate.ValidationError, jsonschema.ValidationError) as error:
        raise AssertionError(f"{name} is invalid for Kubernetes {KUBERNETES_VERSION}: {error.message}") from None
