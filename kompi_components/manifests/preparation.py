"""The data-preparation Job: runs once before master and workers start and writes the data volumes.

Its name ends in a hash of everything that shapes the run (Job spec and the claims it writes): a
changed command, image, env, resources or volume makes a new Job, which Pulumi creates (and waits
for) before it deletes the old one; an unchanged config keeps the same object and nothing reruns.
The hashed name also sidesteps the Job spec being immutable in Kubernetes.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from kompi_components.config.schema import DataPreparation, KompiConfig
from kompi_components.manifests import app_code, data, queue
from kompi_components.manifests.meta import Manifest, manifest, metadata
from kompi_components.manifests.security import container_security_context, pod_security_context
from kompi_components.naming import Names

COMPONENT = "data-preparation"
CONTAINER = "prepare"
HASH_LENGTH = 10
# `pulumi up` waits past the Job's deadline by this much, so that what it reports is the Job's own
# Failed condition (DeadlineExceeded), not a Pulumi timeout.
AWAIT_MARGIN_SECONDS = 60


def _mounts(config: KompiConfig) -> list[dict[str, Any]]:
    return [app_code.code_mount(app) for app in config.app_code] + data.pod_mounts(config, writable=True)


def _volumes(config: KompiConfig, names: Names) -> list[dict[str, Any]]:
    code = [volume for app in config.app_code for volume in app_code.volumes(app)]
    return code + data.pod_volumes(config, names, writable=True)


def _container(config: KompiConfig, preparation: DataPreparation) -> dict[str, Any]:
    container: dict[str, Any] = {
        "name": CONTAINER,
        "image": preparation.image or config.image_reference,
        "imagePullPolicy": config.image_pull_policy,
        "command": list(preparation.command),
        "env": [dict(entry) for entry in preparation.env],
        "resources": dict(preparation.resources),
        "securityContext": container_security_context(config),
        "volumeMounts": _mounts(config),
        # The last log lines become the termination message: `kubectl describe` shows why it failed.
        "terminationMessagePolicy": "FallbackToLogsOnError",
    }
    return {key: value for key, value in container.items() if value not in ([], {})}


def _pod_labels(config: KompiConfig, names: Names) -> dict[str, str]:
    # Another app name keeps the Job's pod out of the selectors of the Service, NetworkPolicy and
    # PodDisruptionBudget (pod labels carry no version: a kompi upgrade alone does not rerun the Job).
    # With kompi:queue the pod is a Kueue workload of its own: it runs before the cluster's group exists.
    own = names.pod_labels(COMPONENT) | {"app.kubernetes.io/name": "kompi-data-preparation"}
    return own | queue.queue_labels(config)


def _job_spec(config: KompiConfig, names: Names, preparation: DataPreparation) -> dict[str, Any]:
    # On the pod network even with kompi:hostNetwork: it runs no MPI.
    pod_spec: dict[str, Any] = {
        "restartPolicy": "Never",
        # The Job touches data only, never the Kubernetes API.
        "automountServiceAccountToken": False,
        "enableServiceLinks": False,
        "securityContext": pod_security_context(config),
        # The same app code as the MPI pods, so that the preparation script can live in the repository.
        "initContainers": [app_code.init_container(config, app) for app in config.app_code],
        "containers": [_container(config, preparation)],
        "volumes": _volumes(config, names),
        "imagePullSecrets": [{"name": secret} for secret in config.image_pull_secrets],
    }
    pod_spec = {key: value for key, value in pod_spec.items() if value != []}
    # No ttlSecondsAfterFinished: a Job deleted by its TTL would be drift for Pulumi (and rerun on
    # the next `up`); the finished Job and its pod logs stay until the spec changes or `destroy`.
    return {
        "backoffLimit": preparation.backoff_limit,
        "activeDeadlineSeconds": preparation.active_deadline_seconds,
        "template": {"metadata": {"labels": _pod_labels(config, names)}, "spec": pod_spec},
    }


def spec_hash(spec: dict[str, Any], claims: list[Manifest]) -> str:
    """Short hash of the Job spec and the specs of the claims it writes (a new claim means new data)."""
    shaped_by = {"job": spec, "claims": [{"name": c["metadata"]["name"], "spec": c["spec"]} for c in claims]}
    text = json.dumps(shaped_by, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:HASH_LENGTH]


def job_name(names: Names, digest: str) -> str:
    # At most 40 + 9 + 10 = 59 characters: Job names become a label value (63 at most).
    return f"{names.cluster}-prepare-{digest}"


def preparation_jobs(config: KompiConfig, names: Names, claims: list[Manifest]) -> list[Manifest]:
    """The Job (none without ``kompi:dataPreparation``); ``claims`` are the data volumes' claims."""
    preparation = config.data_preparation
    if preparation is None:
        return []
    spec = _job_spec(config, names, preparation)
    meta = metadata(names, job_name(names, spec_hash(spec, claims)), COMPONENT)
    meta["annotations"] = {
        # pulumi-kubernetes waits for the Job to complete; let it wait as long as the Job may run.
        "pulumi.com/timeoutSeconds": str(preparation.active_deadline_seconds + AWAIT_MARGIN_SECONDS),
        # After a failed run, the next `up` replaces the failed Job (runs it again) instead of
        # waiting on it, even when nothing changed.
        "pulumi.com/replaceUnready": "true",
    }
    return [manifest("batch/v1", "Job", meta, spec=spec)]
