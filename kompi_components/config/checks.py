"""Rules that span several keys, checked after each key has been validated on its own."""

from __future__ import annotations

from collections.abc import Iterable

from kompi_components import naming
from kompi_components.config.errors import ConfigError
from kompi_components.config.schema import SHARED_ACCESS_MODES, KompiConfig, PodSettings

GPU_RESOURCE = "nvidia.com/gpu"
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


def _check_gpus(config: KompiConfig) -> None:
    limits = config.worker_pod.resources.get("limits", {})
    if not (isinstance(limits, dict) and GPU_RESOURCE in limits and config.gpus_per_worker):
        return
    if str(limits[GPU_RESOURCE]) != str(config.gpus_per_worker):
        raise ConfigError(
            f"workerPod.resources.limits.{GPU_RESOURCE}",
            limits[GPU_RESOURCE],
            f"no GPU limit here, or the same as kompi:gpusPerWorker ({config.gpus_per_worker})",
        )


def _check_user_volumes(key: str, settings: PodSettings) -> set[str]:
    names: set[str] = set()
    for index, volume in enumerate(settings.volumes):
        name = volume.get("name")
        if not isinstance(name, str) or not name:
            raise ConfigError(f"{key}.volumes[{index}].name", name, "a volume name")
        if name.startswith(naming.RESERVED_VOLUME_PREFIX):
            raise ConfigError(f"{key}.volumes[{index}].name", name, "a name not starting with 'kompi-' (reserved)")
        if name in names:
            raise ConfigError(f"{key}.volumes[{index}].name", name, "a volume name used once")
        names.add(name)
    return names


def _check_mounts(key: str, settings: PodSettings, volumes: set[str]) -> None:
    for index, mount in enumerate(settings.volume_mounts):
        name = mount.get("name")
        if name not in volumes:
            raise ConfigError(f"{key}.volumeMounts[{index}].name", name, f"the name of a volume in kompi:{key}.volumes")


def _check_unique_mount_paths(config: KompiConfig) -> None:
    seen: dict[str, str] = {}
    paths: list[tuple[str, str]] = [
        (f"appCode[{i}].mountPath", app.mount_path) for i, app in enumerate(config.app_code)
    ]
    paths += [(f"sharedClaims[{i}].mountPath", claim.mount_path) for i, claim in enumerate(config.shared_claims)]
    if config.worker_volume:
        paths.append(("workerVolume.mountPath", config.worker_volume.mount_path))
    paths += [(f"dataVolumes[{i}].mountPath", volume.mount_path) for i, volume in enumerate(config.data_volumes)]
    for key, path in paths:
        if path in seen:
            raise ConfigError(key, path, f"a mount path not used already (kompi:{seen[path]} uses it)")
        seen[path] = key


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


def check_cross_field_rules(config: KompiConfig) -> None:
    """Raise ConfigError for the first rule that the config breaks."""
    _check_shared_claims(config)
    _check_data_volumes(config)
    _check_data_preparation(config)
    _check_raw_claims(config)
    _check_gpus(config)
    _check_master_compute(config)
    for key, settings in (("masterPod", config.master_pod), ("workerPod", config.worker_pod)):
        _check_mounts(key, settings, _check_user_volumes(key, settings))
    _check_unique_mount_paths(config)
    _check_app_names(config)
