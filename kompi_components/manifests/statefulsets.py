"""The worker StatefulSet and the master (launcher) StatefulSet."""

from __future__ import annotations

from typing import Any

from kompi_components.config.schema import KompiConfig
from kompi_components.contract import GPU_RESOURCE
from kompi_components.manifests import queue
from kompi_components.manifests.meta import WAIT_FOR, Manifest, manifest, metadata
from kompi_components.manifests.oneshot import IGNORE_REPLICAS, releases
from kompi_components.manifests.pod import Role, copied_resources, master_resources, pod_template
from kompi_components.naming import Names


def worker_resources(config: KompiConfig) -> dict[str, Any]:
    resources = copied_resources(config.worker_pod.resources)
    if config.gpus_per_worker:
        resources.setdefault("limits", {})[GPU_RESOURCE] = config.gpus_per_worker
    return resources


def _statefulset(
    config: KompiConfig, names: Names, role: Role, name: str, replicas: int, template: dict[str, Any]
) -> Manifest:
    spec: dict[str, Any] = {
        "replicas": replicas,
        "serviceName": names.service,
        # Start every pod at once: MPI needs all of them, order does not matter.
        "podManagementPolicy": "Parallel",
        "selector": {"matchLabels": names.selector(role)},
        "template": template,
        # kompi's rollout step (StatefulSetRollout) replaces every pod at once: the controller rolls nothing
        # by itself (under RollingUpdate, on a busy cluster, it rolled one pod at a time before that step ran).
        "updateStrategy": {"type": "OnDelete"},
        # Claims made from templates go with the cluster (Pulumi never deletes them itself).
        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete", "whenScaled": "Retain"},
    }
    meta = metadata(names, name, role)
    # pulumi-kubernetes only waits until the controller has taken up the spec (its own readiness wait
    # would hold the update while the controller rolls pods one at a time). kompi's rollout step
    # (StatefulSetRollout) then rolls every pod at once and waits for them, on creation too, failing
    # within a minute on a pod that cannot start. Not skipAwait: that would skip the wait for a deleted
    # StatefulSet to be gone, and its replacement would then meet the old object.
    meta["annotations"] = {WAIT_FOR: "jsonpath={.status.observedGeneration}"} | queue.owner_annotations(config)
    return manifest("apps/v1", "StatefulSet", meta, spec=spec)


def one_per_node(affinity: dict[str, Any], selector: dict[str, str]) -> dict[str, Any]:
    """``affinity`` plus a required anti-affinity of the pods ``selector`` picks, per node."""
    anti = dict(affinity.get("podAntiAffinity", {}))
    required = [*anti.get(REQUIRED, []), {"labelSelector": {"matchLabels": selector}, "topologyKey": HOSTNAME}]
    return affinity | {"podAntiAffinity": anti | {REQUIRED: required}}


REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
HOSTNAME = "kubernetes.io/hostname"


def workers(config: KompiConfig, names: Names) -> Manifest:
    template = pod_template(config, names, "worker", config.worker_pod, worker_resources(config))
    if config.one_worker_per_node:
        spec = template["spec"]
        spec["affinity"] = one_per_node(spec.get("affinity", {}), names.selector("worker"))
    statefulset = _statefulset(config, names, "worker", names.workers, config.workers, template)
    volume = config.worker_volume
    if volume:
        claim_spec: dict[str, Any] = {
            "accessModes": [volume.access_mode],
            "resources": {"requests": {"storage": volume.size}},
        }
        if volume.storage_class_name:
            claim_spec["storageClassName"] = volume.storage_class_name
        statefulset["spec"]["volumeClaimTemplates"] = [
            {"metadata": {"name": volume.name, "labels": names.claim_template_labels("worker")}, "spec": claim_spec}
        ]
    if releases(config):
        statefulset["metadata"]["annotations"][IGNORE_REPLICAS] = "true"
    return statefulset


def master(config: KompiConfig, names: Names) -> Manifest:
    template = pod_template(config, names, "master", config.master_pod, master_resources(config))
    return _statefulset(config, names, "master", names.master, 1, template)
