"""mpiMaster.* and mpiWorkers.*: worker count, resources (GPUs), placement and user volumes."""

from __future__ import annotations

import copy
from typing import Any

from kompi_components.contract import GPU_RESOURCE
from kompi_components.migrate.errors import ValuesError
from kompi_components.migrate.keys import get
from kompi_components.migrate.scalars import whole_number
from kompi_components.migrate.translation import Translation

CHART_WORKERS = 4
# GPUs were requested under this name before the device plugins (removed in Kubernetes 1.11).
LEGACY_GPU_RESOURCE = "alpha.kubernetes.io/nvidia-gpu"
# Kubernetes objects copied as they are: kube-openmpi section -> kompi key -> the keys of both.
# (Worker resources lose their GPU entries and the master's nodeSelector is merged: see below.)
PASS_THROUGH = {
    "mpiMaster": ("masterPod", ("resources", "tolerations", "affinity", "volumes", "volumeMounts")),
    "mpiWorkers": ("workerPod", ("nodeSelector", "tolerations", "affinity", "volumes", "volumeMounts")),
}


def _workers(values: dict[str, Any], result: Translation) -> None:
    num = get(values, "mpiWorkers.num")
    if num is None:
        result.set("workers", CHART_WORKERS, f"mpiWorkers.num (not set: the chart's default {CHART_WORKERS})")
    else:
        result.set("workers", num, "mpiWorkers.num")
    policy = get(values, "mpiWorkers.podManagementPolicy")
    if policy is None or policy == "Parallel":
        result.accept("mpiWorkers.podManagementPolicy")
    else:
        result.warn("mpiWorkers.podManagementPolicy", f"{policy} not imported: kompi always starts workers in parallel")


def _take_gpus(resources: dict[str, Any], path: str, result: Translation) -> int:
    """Remove the GPU entries from ``resources`` and return the GPU count they gave."""
    counts: dict[str, int] = {}
    for section in ("limits", "requests"):
        entries = resources.get(section)
        if not isinstance(entries, dict):
            continue
        for name in (GPU_RESOURCE, LEGACY_GPU_RESOURCE):
            if name in entries:
                key = f"{path}.{section}.{name}"
                counts[key] = whole_number(entries.pop(name), key, "a whole number of GPUs")
                if name == LEGACY_GPU_RESOURCE:
                    result.warn(key, f"now {GPU_RESOURCE} (kompi:gpusPerWorker): Kubernetes removed {name}")
        if not entries:
            del resources[section]
    if len(set(counts.values())) > 1:
        raise ValuesError(path, f"GPU requests and limits differ ({counts}); Kubernetes needs them equal")
    return next(iter(counts.values()), 0)


def _worker_resources(values: dict[str, Any], result: Translation) -> None:
    resources = get(values, "mpiWorkers.resources")
    if resources is not None and not isinstance(resources, dict):
        raise ValuesError("mpiWorkers.resources", "expected a mapping (requests/limits)")
    resources = copy.deepcopy(resources or {})
    gpus = _take_gpus(resources, "mpiWorkers.resources", result)
    if resources:
        result.set("workerPod.resources", resources, "mpiWorkers.resources")
    if gpus:
        result.set("gpusPerWorker", gpus, f"mpiWorkers.resources.limits.{GPU_RESOURCE}")
        result.warn(
            f"mpiWorkers.resources.limits.{GPU_RESOURCE}",
            f"now kompi:gpusPerWorker: {gpus}; the hostfile lists each worker with slots={gpus} (one rank per GPU;"
            " kube-openmpi gave no slots, so Open MPI counted cores); kompi:slotsPerWorker overrides it",
        )
    else:
        result.warn(
            "mpiWorkers.num",
            "the hostfile lists each worker with slots=1 (kube-openmpi gave no slots, so Open MPI counted cores); "
            "set kompi:slotsPerWorker for more ranks per worker",
        )


def _master_node_selector(values: dict[str, Any], result: Translation) -> None:
    """kube-openmpi's master read the top-level nodeSelector; kompi honours mpiMaster.nodeSelector too."""
    merged: dict[str, Any] = {}
    top = values.get("nodeSelector")
    if top:
        if not isinstance(top, dict):
            raise ValuesError("nodeSelector", "expected a mapping of node labels")
        merged.update(top)
        result.set("masterPod.nodeSelector", merged, "nodeSelector")
    else:
        result.accept("nodeSelector")
    own = get(values, "mpiMaster.nodeSelector")
    if not own:
        result.accept("mpiMaster.nodeSelector")
        return
    if not isinstance(own, dict):
        raise ValuesError("mpiMaster.nodeSelector", "expected a mapping of node labels")
    for label, value in own.items():
        if label in merged and merged[label] != value:
            raise ValuesError(
                f"mpiMaster.nodeSelector.{label}", f"conflicts with nodeSelector.{label}: {merged[label]}"
            )
    merged.update(own)
    source = "nodeSelector, mpiMaster.nodeSelector" if top else "mpiMaster.nodeSelector"
    result.set("masterPod.nodeSelector", merged, source)
    result.warn(
        "mpiMaster.nodeSelector",
        "now takes effect: kube-openmpi ignored it (its master read a top-level nodeSelector); "
        "kompi places the master with it",
    )


def _pass_through(values: dict[str, Any], result: Translation) -> None:
    for section, (target, keys) in PASS_THROUGH.items():
        for key in keys:
            value = get(values, f"{section}.{key}")
            if value in (None, {}, []):
                result.accept(f"{section}.{key}")
            else:
                result.set(f"{target}.{key}", copy.deepcopy(value), f"{section}.{key}")


def translate_pods(values: dict[str, Any], result: Translation) -> None:
    _workers(values, result)
    _worker_resources(values, result)
    _master_node_selector(values, result)
    _pass_through(values, result)
