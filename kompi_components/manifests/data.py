"""Shared data volumes that kompi creates: one PersistentVolumeClaim per ``kompi:dataVolumes`` entry,
mounted on the master, every worker and the data-preparation Job."""

from __future__ import annotations

from typing import Any

from kompi_components import naming
from kompi_components.config.schema import DataVolume, KompiConfig
from kompi_components.manifests.meta import RETAIN_ON_DELETE, ObjectOptions, PlannedObject, manifest, metadata
from kompi_components.naming import Names

COMPONENT = "data"


def read_only_in_pods(config: KompiConfig, volume: DataVolume) -> bool:
    """Read-only in the MPI pods when a preparation Job writes the data, unless configured otherwise."""
    if volume.read_only_in_pods is not None:
        return volume.read_only_in_pods
    return config.data_preparation is not None


def claim(names: Names, volume: DataVolume) -> PlannedObject:
    spec: dict[str, Any] = {
        "accessModes": [volume.access_mode],
        "resources": {"requests": {"storage": volume.size}},
    }
    if volume.storage_class_name:
        spec["storageClassName"] = volume.storage_class_name
    meta = metadata(names, names.data_claim(volume.name), COMPONENT)
    if volume.retain:
        meta["annotations"] = {RETAIN_ON_DELETE: "true"}  # for kubectl users: the option is what retains it
    claim_manifest = manifest("v1", "PersistentVolumeClaim", meta, spec=spec)
    return PlannedObject(claim_manifest, ObjectOptions(retain_on_delete=volume.retain))


def claims(config: KompiConfig, names: Names) -> list[PlannedObject]:
    return [claim(names, volume) for volume in config.data_volumes]


def pod_volumes(config: KompiConfig, names: Names, writable: bool = False) -> list[dict[str, Any]]:
    """The claims as pod volumes; ``writable`` for the preparation Job, else per readOnlyInPods."""
    return [
        {
            "name": naming.data_volume(volume.name),
            "persistentVolumeClaim": {
                "claimName": names.data_claim(volume.name),
                "readOnly": not writable and read_only_in_pods(config, volume),
            },
        }
        for volume in config.data_volumes
    ]


def pod_mounts(config: KompiConfig, writable: bool = False) -> list[dict[str, Any]]:
    return [
        {
            "name": naming.data_volume(volume.name),
            "mountPath": volume.mount_path,
            "readOnly": not writable and read_only_in_pods(config, volume),
        }
        for volume in config.data_volumes
    ]
