"""Rules that span several keys, checked after each key has been validated on its own."""

from __future__ import annotations

from collections.abc import Iterable

from kompi_components import contract, naming
from kompi_components.config import mounts
from kompi_components.config.errors import MISSING, ConfigError
from kompi_components.config.schema import SHARED_ACCESS_MODES, KompiConfig, PodSettings

ATTACH_HINT = "a ReadWriteOnce claim attaches to one node only ('Volume is already attached by pod ...')"


def _claim_names(settings: PodSettings) -> Iterable[tuple[int, str]]:
    for index, volume in enumerate(settings.volumes):
        claim = volume.get("persistentVolumeClaim")
        if isinstance(claim, dict) and isinstance(claim.get("claimName"), str):
            yield index, claim["claimName"]


def _check_shared_claims(config: KompiConfig) -> None:
    pods = 1 + config.workers
    for index, claim in enumerate(config.shared_claims):
        if pods > 1 and claim.access_mode not in SHARED_ACCESS_MODES:
            raise ConfigError(
                f"sharedClaims[{index}].accessMode",
                claim.access_mode,
                f"ReadWriteMany or ReadOnlyMany: claim '{claim.claim_name}' is mounted by {pods} pods; {ATTACH_HINT}",
            )


def _check_data_volumes(config: KompiConfig) -> None:
    pods = 1 + config.workers
    seen: set[str] = set()
    for index, volume in enumerate(config.data_volumes):
        key = f"dataVolumes[{index}]"
        if volume.name in seen:
            raise ConfigError(f"{key}.name", volume.name, "a name used by one dataVolumes entry only")
        seen.add(volume.name)
        claim = naming.cluster_names(config).data_claim(volume.name)
        if pods > 1 and volume.access_mode not in SHARED_ACCESS_MODES:
            raise ConfigError(
                f"{key}.accessMode",
                volume.access_mode,
                f"ReadWriteMany or ReadOnlyMany: claim '{claim}' is mounted by {pods} pods; {ATTACH_HINT}",
            )
        _check_data_volume_writable(config, key, volume.access_mode, claim)
        if volume.retain and config.create_namespace:
            raise ConfigError(
                f"{key}.retain",
                True,
                "false while kompi:createNamespace is true: destroying the namespace deletes every claim in it "
                "(create the namespace yourself and set kompi:createNamespace to false)",
            )


def _check_data_volume_writable(config: KompiConfig, key: str, access_mode: str, claim: str) -> None:
    if config.data_preparation is None:
        return
    if access_mode == "ReadOnlyMany":
        raise ConfigError(
            f"{key}.accessMode", access_mode, f"a writable mode: the data-preparation Job writes claim '{claim}'"
        )
    if access_mode == "ReadWriteOncePod":
        # A rerun of the Job would wait forever for the running master to let go of the claim.
        raise ConfigError(
            f"{key}.accessMode",
            access_mode,
            f"ReadWriteMany or ReadWriteOnce: the data-preparation Job and the master both mount claim '{claim}'",
        )


def _check_raw_claims(config: KompiConfig) -> None:
    master_claims = {name for _, name in _claim_names(config.master_pod)}
    hint = "a claim used by one pod only; to share one, list it in kompi:sharedClaims with its accessMode"
    for index, name in _claim_names(config.worker_pod):
        key = f"workerPod.volumes[{index}].persistentVolumeClaim.claimName"
        if name in master_claims:
            raise ConfigError(key, name, f"{hint} (it is also in kompi:masterPod.volumes)")
        if config.workers > 1:
            raise ConfigError(key, name, f"{hint} (it would be mounted by {config.workers} workers)")


def _gpu_entries(key: str, resources: dict[str, object]) -> list[tuple[str, object]]:
    found = []
    for section in ("limits", "requests"):
        amounts = resources.get(section)
        if isinstance(amounts, dict) and contract.GPU_RESOURCE in amounts:
            found.append((f"{key}.resources.{section}.{contract.GPU_RESOURCE}", amounts[contract.GPU_RESOURCE]))
    return found


def _check_gpus(config: KompiConfig) -> None:
    """kompi:gpusPerWorker is the one source of GPUs: it sets the limit and the hostfile's slots."""
    gpus = config.gpus_per_worker
    for key, value in _gpu_entries("workerPod", config.worker_pod.resources):
        if str(value) != str(gpus) or not gpus:
            raise ConfigError(
                key,
                value,
                f"no GPU entry here, or the same as kompi:gpusPerWorker ({gpus}): set the GPUs with "
                "kompi:gpusPerWorker, which sets this limit and each worker's slots in the hostfile",
            )
    if not (config.master_pod.compute and gpus):
        return
    # A compute master runs rank 0 with a worker's slots, so it gets a worker's GPUs (manifests/pod.py).
    for key, value in _gpu_entries("masterPod", config.master_pod.resources):
        if str(value) != str(gpus):
            raise ConfigError(
                key,
                value,
                f"no GPU entry here, or {gpus}: with kompi:masterPod.compute the master gets "
                f"kompi:gpusPerWorker ({gpus}) GPUs, one per rank like a worker",
            )


# Namespaces the cluster owns: with createNamespace, kompi would relabel them and delete them on destroy.
SYSTEM_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})


def _check_namespace(config: KompiConfig) -> None:
    if config.create_namespace and config.namespace in SYSTEM_NAMESPACES:
        raise ConfigError(
            "namespace",
            config.namespace,
            "a namespace kompi may own while kompi:createNamespace is true (kompi would take it over and delete "
            f"it on destroy); to use {config.namespace!r}, set kompi:createNamespace: false",
        )


def _check_app_names(config: KompiConfig) -> None:
    seen: set[str] = set()
    for index, app in enumerate(config.app_code):
        if app.name in seen:
            raise ConfigError(f"appCode[{index}].name", app.name, "a name used by one appCode entry only")
        seen.add(app.name)


def _check_data_preparation(config: KompiConfig) -> None:
    if config.data_preparation is not None and not config.data_volumes:
        shown = config.data_preparation.model_dump(by_alias=True, exclude_defaults=True)
        raise ConfigError("dataPreparation", shown, "kompi:dataVolumes too: the Job writes into the data volumes")


def _check_master_compute(config: KompiConfig) -> None:
    # The one-shot master is a Job without sshd: no other host can start ranks on it.
    if config.master_pod.compute and config.one_shot.enabled:
        raise ConfigError(
            "masterPod.compute", True, "false when kompi:oneShot is enabled (the one-shot master runs no sshd)"
        )


def _check_queue(config: KompiConfig) -> None:
    if config.queue_priority_class is not None and config.queue is None:
        raise ConfigError(
            "queuePriorityClass",
            config.queue_priority_class,
            "unset without kompi:queue: a WorkloadPriorityClass orders the workloads of a Kueue queue",
        )


HOST_NETWORK = "with kompi:hostNetwork.enabled"


def _check_host_network(config: KompiConfig) -> None:
    if not config.host_network.enabled:
        return
    if config.host_network.mpi_interfaces is None:
        raise ConfigError(
            "hostNetwork.mpiInterfaces",
            MISSING,
            f"the nodes' interfaces for MPI {HOST_NETWORK}, such as ens5 or 10.0.0.0/16 (the image's eth0 is the "
            "pod's interface, which a node rarely has)",
        )
    if config.network_policy.enabled:
        raise ConfigError(
            "networkPolicy.enabled",
            True,
            f"false {HOST_NETWORK}: a NetworkPolicy cannot fence host-network pods (set kompi:networkPolicy.enabled "
            "to false with kompi:hostNetwork; docs/security.md)",
        )
    if config.network_policy.ssh_allow_from:
        raise ConfigError(
            "networkPolicy.sshAllowFrom",
            config.network_policy.ssh_allow_from,
            f"[] {HOST_NETWORK}: no NetworkPolicy applies to host-network pods (limit who reaches the nodes' port "
            f"{contract.SSH_PORT} with the nodes' own firewall)",
        )
    if config.master_pod.compute:
        # kompi-discover lists a compute master under its hostname, which on the host network is the node's.
        raise ConfigError(
            "masterPod.compute",
            True,
            f"false {HOST_NETWORK}: the master lists itself in the hostfile by its hostname, which on the host "
            "network is the node's",
        )
    if config.run_as_root:
        raise ConfigError(
            "runAsRoot",
            True,
            f"false {HOST_NETWORK}: root pods keep the runtime's default capabilities (NET_RAW among them), "
            "which on the node's network reach the node's own traffic",
        )


def check_cross_field_rules(config: KompiConfig) -> None:
    """Raise ConfigError for the first rule that the config breaks."""
    _check_namespace(config)
    _check_shared_claims(config)
    _check_data_volumes(config)
    _check_data_preparation(config)
    _check_raw_claims(config)
    _check_gpus(config)
    _check_master_compute(config)
    _check_host_network(config)
    _check_queue(config)
    mounts.check_volumes(config)
    mounts.check_mount_paths(config)
    _check_app_names(config)
