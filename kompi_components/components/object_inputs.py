"""The resource inputs of each object: its manifest, or, when config values arrive as Outputs, the fields of
the same object built from the real config.

The shape objects (built from the shape config, kompi_components.components.inputs) decide which resources
are registered; with values deferred, each of their resource inputs is read from the real objects instead.
"""

from __future__ import annotations

from typing import Any

import pulumi

from kompi_components.manifests.cluster import ClusterObjects
from kompi_components.manifests.meta import Manifest, PlannedObject

# Fields that no config value changes, so the provider always sees them plain.
_TYPE_FIELDS = ("apiVersion", "kind")


class ShapeMismatch(RuntimeError):
    """The real config built other objects than the shape config (a defect in kompi, never bad input)."""


class ObjectInputs:
    """``real``: None when nothing is deferred (the shape objects are the real ones)."""

    def __init__(self, shape: ClusterObjects, real: pulumi.Output[ClusterObjects] | None) -> None:
        self._positions = {id(item): position for position, item in enumerate(shape.all())}
        self._real = real

    def __call__(self, item: PlannedObject) -> Manifest:
        """``item``'s inputs: its manifest, or its fields as Outputs (metadata field by field, so that the
        name, namespace and labels each say when they are known)."""
        if self._real is None:
            return item.manifest
        shape = item.manifest
        position = self._positions[id(item)]
        real = self._real.apply(lambda objects: _same_object(shape, objects.all()[position].manifest))
        inputs: dict[str, Any] = {key: shape[key] for key in _TYPE_FIELDS}
        inputs["metadata"] = {key: _field(real, "metadata", key) for key in shape["metadata"]}
        for key in shape:
            if key not in (*_TYPE_FIELDS, "metadata"):
                inputs[key] = _field(real, key)
        return inputs


def _field(manifest: pulumi.Output[Manifest], *path: str) -> pulumi.Output[Any]:
    def get(value: Any) -> Any:
        for key in path:
            value = value[key]
        return value

    return manifest.apply(get)


def _same_object(shape: Manifest, real: Manifest) -> Manifest:
    """``real``, once checked to be the object that ``shape`` registered (kind, fields and metadata's fields)."""
    same = [shape.get(key) == real.get(key) for key in _TYPE_FIELDS]
    if not all(same) or shape.keys() != real.keys() or shape["metadata"].keys() != real["metadata"].keys():
        raise ShapeMismatch(f"kompi built {real['kind']} {real['metadata'].get('name')} in place of {shape['kind']}")
    return real
