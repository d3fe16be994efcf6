"""All objects of one cluster, grouped the way the Pulumi components own them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kompi_components.config.schema import KompiConfig
from kompi_components.manifests.data import claims
from kompi_components.manifests.gang import gang_objects
from kompi_components.manifests.meta import Manifest, PlannedObject
from kompi_components.manifests.namespace import namespace, pod_security_level
from kompi_components.manifests.network_policy import network_policies
from kompi_components.manifests.oneshot import JOB_OPTIONS, job, release_rbac, worker_options
from kompi_components.manifests.preparation import preparation_jobs
from kompi_components.manifests.service import headless_service
from kompi_components.manifests.ssh_secret import ssh_secret
from kompi_components.manifests.statefulsets import master, workers
from kompi_components.naming import cluster_names


@dataclass(frozen=True)
class ClusterObjects:
    """Each group's objects with their Pulumi options."""

    namespace: list[PlannedObject]
    ssh: list[PlannedObject]
    network: list[PlannedObject]
    data: list[PlannedObject]
    preparation: list[PlannedObject]
    workers: list[PlannedObject]
    master: list[PlannedObject]
    gang: list[PlannedObject]

    def all(self) -> list[PlannedObject]:
        """Every object, in the order they are created."""
        groups = (self.namespace, self.ssh, self.network, self.data, self.preparation, self.workers, self.master)
        return [item for group in (*groups, self.gang) for item in group]


def _plain(manifests: list[Manifest]) -> list[PlannedObject]:
    """Objects Pulumi treats as it does by default."""
    return [PlannedObject(item) for item in manifests]


def build_cluster(config: KompiConfig, ssh_data: Mapping[str, Any] | Any) -> ClusterObjects:
    """The cluster's objects; ``ssh_data`` is the SSH Secret's content (an Output at `pulumi up`)."""
    names = cluster_names(config)
    data = claims(config, names)
    return ClusterObjects(
        namespace=_plain([namespace(names, pod_security_level(config))] if config.create_namespace else []),
        ssh=_plain([ssh_secret(names, ssh_data)]),
        network=_plain([headless_service(names), *network_policies(config, names)]),
        data=data,
        preparation=_plain(preparation_jobs(config, names, [claim.manifest for claim in data])),
        workers=[PlannedObject(workers(config, names), worker_options(config))],
        # One-shot mode: the release RBAC, then the Job, instead of the master StatefulSet.
        master=(
            [*_plain(release_rbac(config, names)), PlannedObject(job(config, names), JOB_OPTIONS)]
            if config.one_shot.enabled
            else _plain([master(config, names)])
        ),
        gang=_plain(gang_objects(config, names)),
    )
