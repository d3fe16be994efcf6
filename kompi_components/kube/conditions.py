"""Status conditions of Kubernetes objects, as read back from the API server."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def true_condition(resource: Mapping[str, Any], condition: str) -> Mapping[str, Any] | None:
    """The object's ``condition`` if it is True, else None (an object whose status has no conditions yet has
    none); its lastTransitionTime says since when."""
    conditions = (resource.get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c["type"] == condition and c["status"] == "True"), None)


def has_condition(resource: Mapping[str, Any], condition: str) -> bool:
    """The object's ``condition`` is True."""
    return true_condition(resource, condition) is not None


def is_ready(resource: Mapping[str, Any]) -> bool:
    """A pod's or a node's Ready condition is True."""
    return has_condition(resource, "Ready")


def is_lost(node: Mapping[str, Any] | None) -> bool:
    """A node that will not run or stop its pods: its Node object is gone (None) or it is not Ready."""
    return node is None or not is_ready(node)
