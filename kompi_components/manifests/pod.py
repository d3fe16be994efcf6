"""The pod template shared by master and workers: image, sshd, keys, probes, volumes, security."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Literal

from kompi_components import contract, naming
from kompi_components.config.schema import KompiConfig, PodSettings
from kompi_components.manifests import app_code, data, host_network, queue
from kompi_components.manifests.mpi_env import mpi_env
from kompi_components.manifests.security import container_security_context, pod_security_context
from kompi_components.naming import Names

Role = Literal["master", "worker"]
MPI_CONTAINER = "mpi"
ENTRYPOINTS: dict[Role, str] = {"master": contract.MASTER_ENTRYPOINT, "worker": contract.WORKER_ENTRYPOINT}


SSH_KEY_VERSION_ANNOTATION = "kompi.io/ssh-key-version"


def copied_resources(resources: dict[str, Any]) -> dict[str, Any]:
    """A deep copy of user resources, so that the builders can add to it (GPU limits)."""
    return copy.deepcopy(resources)


def master_resources(config: KompiConfig) -> dict[str, Any]:
    resources = copied_resources(config.master_pod.resources)
    if config.master_pod.compute and config.gpus_per_worker:
        # A compute master runs ranks like a worker (one per GPU): it gets a worker's GPUs.
        resources.setdefault("limits", {})[contract.GPU_RESOURCE] = config.gpus_per_worker
    return resources


def _env(config: KompiConfig, names: Names, role: Role) -> list[dict[str, str]]:
    values = {
        contract.ENV_ROLE: role,
        contract.ENV_CLUSTER: names.cluster,
        contract.ENV_SERVICE_DOMAIN: names.service_domain,
        contract.ENV_WORKER_PREFIX: names.workers,
        contract.ENV_SLOTS_PER_WORKER: str(config.slots),
        contract.ENV_HOSTFILE: contract.HOSTFILE,
    }
    if role == "master" and config.master_pod.compute:
        values[contract.ENV_MASTER_SLOTS] = str(config.slots)
    values |= mpi_env(config)
    return [{"name": key, "value": value} for key, value in values.items()]


def _kompi_volumes(config: KompiConfig, names: Names, role: Role) -> list[dict[str, Any]]:
    volumes: list[dict[str, Any]] = [
        {"name": naming.VOLUME_SSH, "secret": {"secretName": names.ssh_secret, "defaultMode": contract.SSH_SECRET_MODE}}
    ]
    if role == "master":
        volumes.append({"name": naming.VOLUME_GENERATED, "emptyDir": {}})
    if config.shm_size:
        volumes.append({"name": naming.VOLUME_SHM, "emptyDir": {"medium": "Memory", "sizeLimit": config.shm_size}})
    for app in config.app_code:
        volumes += app_code.volumes(app)
    for index, claim in enumerate(config.shared_claims):
        volumes.append(
            {
                "name": naming.shared_claim_volume(index),
                "persistentVolumeClaim": {"claimName": claim.claim_name, "readOnly": claim.read_only},
            }
        )
    return volumes + data.pod_volumes(config, names)


def _kompi_mounts(config: KompiConfig, role: Role) -> list[dict[str, Any]]:
    mounts: list[dict[str, Any]] = [{"name": naming.VOLUME_SSH, "mountPath": contract.SSH_SECRET_DIR, "readOnly": True}]
    if role == "master":
        mounts.append({"name": naming.VOLUME_GENERATED, "mountPath": contract.GENERATED_DIR})
    if config.shm_size:
        mounts.append({"name": naming.VOLUME_SHM, "mountPath": contract.SHM_DIR})
    mounts += [app_code.code_mount(app) for app in config.app_code]
    for index, claim in enumerate(config.shared_claims):
        mounts.append(
            {"name": naming.shared_claim_volume(index), "mountPath": claim.mount_path, "readOnly": claim.read_only}
        )
    if role == "worker" and config.worker_volume:
        mounts.append({"name": config.worker_volume.name, "mountPath": config.worker_volume.mount_path})
    return mounts + data.pod_mounts(config)


# Ready means sshd answers (banner check): only then does the headless Service publish the pod.
# Each check costs sshd ~20 ms CPU and a log line (bench/images/probe_cost.py) plus the runtime's exec,
# so it runs every second only until the first success (startupProbe; kubelet then runs the readiness
# probe at once) and every 10 s afterwards instead of every 2 s.
_CHECK = {"exec": {"command": [contract.READY_PROBE]}, "timeoutSeconds": 2}
STARTUP_PERIOD, STARTUP_ATTEMPTS, READY_PERIOD = 1, 300, 10


def _startup_probe() -> dict[str, Any]:
    return {**_CHECK, "periodSeconds": STARTUP_PERIOD, "failureThreshold": STARTUP_ATTEMPTS}


def _readiness_probe() -> dict[str, Any]:
    return {**_CHECK, "periodSeconds": READY_PERIOD, "failureThreshold": 1}


@dataclass(frozen=True)
class Launch:
    """A master that runs one command instead of sshd (one-shot mode): no SSH port and no probes (it is no MPI
    host); on the host network it claims no hostPort either, so it may share a node with a worker."""

    command: list[str]  # its entrypoint
    args: list[str]
    env: dict[str, str]  # on top of every role's
    service_account: str | None  # whose token it gets (none: no token, as every other pod)


def mpi_container(
    config: KompiConfig,
    names: Names,
    role: Role,
    settings: PodSettings,
    resources: dict[str, Any],
    launch: Launch | None = None,
) -> dict[str, Any]:
    env = _env(config, names, role) + [
        {"name": key, "value": value} for key, value in (launch.env if launch else {}).items()
    ]
    container: dict[str, Any] = {
        "name": MPI_CONTAINER,
        "image": config.image_reference,
        "imagePullPolicy": config.image_pull_policy,
        "command": launch.command if launch else [ENTRYPOINTS[role]],
        "env": env,
    }
    if launch is None:
        container |= {
            "ports": [host_network.ssh_port(config)],
            "startupProbe": _startup_probe(),
            "readinessProbe": _readiness_probe(),
        }
    container |= {
        "resources": resources,
        "securityContext": container_security_context(config),
        "volumeMounts": _kompi_mounts(config, role) + list(settings.volume_mounts),
        # the termination message is the exit code line kompi-oneshot writes (logs only if it could not)
        "terminationMessagePolicy": "FallbackToLogsOnError",
    }
    if launch is not None:
        container["args"] = launch.args
    return container


def pod_template(
    config: KompiConfig,
    names: Names,
    role: Role,
    settings: PodSettings,
    resources: dict[str, Any],
    launch: Launch | None = None,
) -> dict[str, Any]:
    """The pod of ``role``; with ``launch``, a master that runs one command (a Job's pod: never restarted)."""
    account = launch.service_account if launch else None
    spec: dict[str, Any] = {
        # MPI talks over SSH, never to the Kubernetes API (a one-shot master that releases its workers does).
        "automountServiceAccountToken": account is not None,
        "enableServiceLinks": False,
        **host_network.pod_fields(config),
        "securityContext": pod_security_context(config),
        "initContainers": [app_code.init_container(config, app) for app in config.app_code],
        "containers": [mpi_container(config, names, role, settings, resources, launch)],
        "volumes": _kompi_volumes(config, names, role) + list(settings.volumes),
        "nodeSelector": dict(settings.node_selector),
        "tolerations": list(settings.tolerations),
        "affinity": dict(settings.affinity),
        "imagePullSecrets": [{"name": secret} for secret in config.image_pull_secrets],
        "terminationGracePeriodSeconds": 30,
    }
    if config.gang_scheduling.enabled:
        spec["schedulerName"] = config.gang_scheduling.scheduler
    # Leave out empty optional fields so the rendered objects stay readable.
    spec = {key: value for key, value in spec.items() if value not in (None, [], {})}
    if launch is not None:
        spec["restartPolicy"] = "Never"  # a Job's pod: a finished or failed command never reruns
        if account is not None:
            spec["serviceAccountName"] = account
    # A new SSH key version changes the template, so every pod restarts with the new keys: sshd reads
    # its host key once, and a cluster that mixed old and new keys would fail jobs mid-rotation.
    annotations = dict(settings.annotations) | {SSH_KEY_VERSION_ANNOTATION: str(config.ssh_key_version)}
    labels = names.pod_labels(role)
    if config.gang_scheduling.enabled:
        if config.gang_scheduling.mode == "volcano":
            annotations["scheduling.k8s.io/group-name"] = names.gang
        elif config.gang_scheduling.mode == "scheduler-plugins":
            labels["scheduling.x-k8s.io/pod-group"] = names.gang
    group_labels, group_annotations = queue.group_metadata(config, names, role)
    labels |= group_labels
    annotations |= group_annotations
    meta: dict[str, Any] = {"labels": labels}
    if annotations:
        meta["annotations"] = annotations
    return {"metadata": meta, "spec": spec}
