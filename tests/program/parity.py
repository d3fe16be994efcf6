"""Helpers to compare what `pulumi up` registers with what the offline render prints."""

from __future__ import annotations

from typing import Any

from kompi_components import contract


def normalize(value: Any) -> Any:
    """Pulumi's wire format turns ints into floats; make whole floats ints again."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {key: normalize(item) for key, item in value.items()}
    if isinstance(value, list):
        return [normalize(item) for item in value]
    return value


def without_key_material(manifest: dict[str, Any]) -> dict[str, Any]:
    """The SSH Secret's values differ by design (placeholders offline); keep its keys."""
    if manifest.get("kind") == "Secret" and "stringData" in manifest:
        assert sorted(manifest["stringData"]) == sorted(contract.SSH_SECRET_KEYS)
        return manifest | {"stringData": sorted(manifest["stringData"])}
    return manifest


def by_identity(manifests: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(m["kind"], m["metadata"]["name"]): without_key_material(normalize(m)) for m in manifests}
