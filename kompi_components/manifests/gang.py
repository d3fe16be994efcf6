"""Gang scheduling: master and workers are admitted together or not at all."""

from __future__ import annotations

from kompi_components.config.schema import KompiConfig
from kompi_components.manifests.meta import Manifest, manifest, metadata
from kompi_components.naming import Names

POD_GROUP_APIS = {
    "volcano": "scheduling.volcano.sh/v1beta1",
    "scheduler-plugins": "scheduling.x-k8s.io/v1alpha1",
}


def gang_size(config: KompiConfig) -> int:
    """The master counts: a gang without it deadlocks when the launcher waits for workers."""
    return config.workers + 1


def gang_objects(config: KompiConfig, names: Names) -> list[Manifest]:
    gang = config.gang_scheduling
    if not gang.enabled:
        return []
    meta = metadata(names, names.gang)
    if gang.mode == "pdb":
        spec = {"minAvailable": gang_size(config), "selector": {"matchLabels": names.selector()}}
        return [manifest("policy/v1", "PodDisruptionBudget", meta, spec=spec)]
    return [manifest(POD_GROUP_APIS[gang.mode], "PodGroup", meta, spec={"minMember": gang_size(config)})]
