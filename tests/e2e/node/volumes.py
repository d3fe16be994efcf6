"""Volumes on the real node's disk, standing in for a storage provisioner in the node tests."""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from kompi_components import contract
from tests.e2e.live import Kubectl


def host_volume(kubectl: Kubectl, directory: Path, name: str, storage_class: str) -> None:
    """A PersistentVolume ``name`` of ``storage_class`` on ``directory``, owned by the pods' user (a hostPath
    volume gets no fsGroup), for claims of any access mode."""
    directory.mkdir(parents=True)
    os.chown(directory, contract.MPI_UID, contract.MPI_GID)
    volume = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteMany", "ReadWriteOnce", "ReadOnlyMany"],
            "storageClassName": storage_class,
            "persistentVolumeReclaimPolicy": "Retain",
            "hostPath": {"path": str(directory), "type": "Directory"},
        },
    }
    kubectl.run("apply", "-f", "-", input_text=yaml.safe_dump(volume))
