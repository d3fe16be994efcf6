"""Status conditions of Kubernetes objects, as read back from the API server."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def is_ready(resource: Mapping[str, Any]) -> bool:
    """A pod's or a node's Ready condition is True."""
    conditions = resource.get("status", {}).get("conditions", [])
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


def is_lost(node: Mapping[str, Any] | None) -> bool:
    """A node that will not run or stop its pods: its Node object is gone (None) or it is not Ready."""
    return node is None or not is_ready(node)
