"""Gang scheduling: master and workers are admitted together or not at all."""

from __future__ import annotations

from typing import Any

from kompi_components.config.schema import KompiConfig
from kompi_components.manifests import quantities
from kompi_components.manifests.meta import Manifest, manifest, metadata
from kompi_components.manifests.pod import master_resources
from kompi_components.manifests.statefulsets import worker_resources
from kompi_components.naming import Names

POD_GROUP_APIS = {
    "volcano": "scheduling.volcano.sh/v1beta1",
    "scheduler-plugins": "scheduling.x-k8s.io/v1alpha1",
}


def gang_size(config: KompiConfig) -> int:
    """The master counts: a gang without it deadlocks when the launcher waits for workers."""
    return config.workers + 1


def gang_resources(config: KompiConfig) -> dict[str, str]:
    """What the whole gang requests (workers and master, GPUs included). Coscheduling checks that the
    cluster has it free before it places any member, so a gang that cannot fit holds nothing."""
    return quantities.total(
        [
            (config.workers, quantities.pod_requests(worker_resources(config))),
            (1, quantities.pod_requests(master_resources(config))),
        ]
    )


def pod_group_spec(config: KompiConfig) -> dict[str, Any]:
    spec: dict[str, Any] = {"minMember": gang_size(config)}
    resources = gang_resources(config)
    if resources:
        spec["minResources"] = resources
    return spec


def gang_objects(config: KompiConfig, names: Names) -> list[Manifest]:
    gang = config.gang_scheduling
    if not gang.enabled:
        return []
    meta = metadata(names, names.gang)
    if gang.mode == "pdb":
        spec = {"minAvailable": gang_size(config), "selector": {"matchLabels": names.selector()}}
        return [manifest("policy/v1", "PodDisruptionBudget", meta, spec=spec)]
    return [manifest(POD_GROUP_APIS[gang.mode], "PodGroup", meta, spec=pod_group_spec(config))]
