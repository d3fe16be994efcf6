"""Every key that kube-openmpi's chart (0.7.0) reads, and the check that a values file uses no other.

A leaf (None) takes any value: Kubernetes objects such as resources or volumes pass through and are
checked by kompi's own config validation.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kompi_components.migrate.errors import ValuesError

LEAF = None


@dataclass(frozen=True)
class ListOf:
    """A list whose items are mappings with these keys."""

    item: dict[str, Any]


_IMAGE = {"repository": LEAF, "tag": LEAF, "pullPolicy": LEAF}
_POD = {
    "securityContext": LEAF,
    "resources": LEAF,
    "nodeSelector": LEAF,
    "tolerations": LEAF,
    "affinity": LEAF,
    "volumes": LEAF,
    "volumeMounts": LEAF,
}

KUBE_OPENMPI_KEYS: dict[str, Any] = {
    "image": _IMAGE | {"pullSecrets": ListOf({"name": LEAF})},
    "kubectlImage": _IMAGE,
    "gitSyncImage": _IMAGE,
    "networkPolicy": {"enabled": LEAF},
    "sshGateway": {"enabled": LEAF, "nodePort": LEAF},
    "sshKey": {"id_rsa": LEAF, "id_rsa_pub": LEAF},
    # The chart's master template reads this top-level key (not mpiMaster.nodeSelector).
    "nodeSelector": LEAF,
    "mpiMaster": _POD
    | {
        "autoUpdateHostfile": {"enabled": LEAF, "updateEvery": LEAF},
        "oneShot": {"enabled": LEAF, "autoScaleDownWorkers": LEAF, "command": LEAF},
        "customScheduling": {"enabled": LEAF, "schedulerName": LEAF},
    },
    "mpiWorkers": _POD
    | {
        "num": LEAF,
        "podManagementPolicy": LEAF,
        "customScheduling": {"enabled": LEAF, "schedulerName": LEAF, "podDisruptionBudget": {"enabled": LEAF}},
    },
    "appCodesToSync": ListOf(
        {
            "name": LEAF,
            "gitRepo": LEAF,
            "gitBranch": LEAF,
            "fetchWaitSecond": LEAF,
            "mountPath": LEAF,
            "subPath": LEAF,
            "gitSecretName": LEAF,
        }
    ),
}


def join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def _unknown(path: str, key: str, known: Mapping[str, Any]) -> ValuesError:
    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    hint = f" (did you mean {join(path, close[0])}?)" if close else ""
    return ValuesError(join(path, key), f"unknown kube-openmpi key{hint}; kompi imports the keys of kube-openmpi 0.7.0")


def check_known_keys(values: Mapping[str, Any], spec: dict[str, Any] = KUBE_OPENMPI_KEYS, path: str = "") -> None:
    """Raise ValuesError naming the first key kube-openmpi does not read, or a section of the wrong type."""
    for key, value in values.items():
        if key not in spec:
            raise _unknown(path, str(key), spec)
        _check_value(value, spec[key], join(path, key))


def _check_value(value: object, spec: Any, path: str) -> None:
    if spec is LEAF or value is None:
        return
    if isinstance(spec, ListOf):
        if not isinstance(value, list):
            raise ValuesError(path, "expected a list")
        for index, item in enumerate(value):
            if not isinstance(item, dict):
                raise ValuesError(join(path, index), "expected a mapping")
            check_known_keys(item, spec.item, join(path, index))
        return
    if not isinstance(value, dict):
        raise ValuesError(path, "expected a mapping")
    check_known_keys(value, spec, path)


def get(values: Mapping[str, Any], dotted: str) -> Any:
    """The value at ``dotted`` (e.g. "mpiWorkers.num"), or None when absent."""
    current: Any = values
    for part in dotted.split("."):
        if not isinstance(current, Mapping):
            return None
        current = current.get(part)
    return current


def leaf_paths(spec: dict[str, Any], prefix: str = "", list_marker: str = "[]") -> list[str]:
    """Every key path the chart reads, e.g. ``image.pullSecrets[].name`` (``list_marker`` after lists)."""
    paths: list[str] = []
    for key, child in spec.items():
        path = f"{prefix}.{key}" if prefix else key
        if child is LEAF:
            paths.append(path)
        elif isinstance(child, ListOf):
            paths += leaf_paths(child.item, f"{path}{list_marker}", list_marker)
        else:
            paths += leaf_paths(child, path, list_marker)
    return paths
