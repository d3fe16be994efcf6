"""Pod volumes and mount paths: user ones must not collide with kompi's own or with each other.

The API server refuses two mounts at one path in a container, and a mount inside a read-only
Secret volume fails in the kubelet; both only once the pods are created, after the Namespace,
Secret and Service exist. kompi refuses them before anything is created.
"""

from __future__ import annotations

import posixpath

from kompi_components import contract, naming
from kompi_components.config.errors import ConfigError
from kompi_components.config.schema import DNS_LABEL, KompiConfig, PodSettings

Mount = tuple[str, str]  # (config key, or what kompi mounts there; path)


def _kompi_mounts(config: KompiConfig, role: str) -> list[Mount]:
    mounts = [("the cluster's SSH keys", contract.SSH_SECRET_DIR)]
    if role == "master":
        mounts.append(("the hostfile", contract.GENERATED_DIR))
    if config.shm_size:
        mounts.append(("the memory-backed /dev/shm of kompi:shmSize (null to mount your own)", contract.SHM_DIR))
    return mounts


def _configured_mounts(config: KompiConfig, role: str, key: str, settings: PodSettings) -> list[Mount]:
    mounts = [(f"appCode[{i}].mountPath", app.mount_path) for i, app in enumerate(config.app_code)]
    mounts += [(f"sharedClaims[{i}].mountPath", claim.mount_path) for i, claim in enumerate(config.shared_claims)]
    if role == "worker" and config.worker_volume:
        mounts.append(("workerVolume.mountPath", config.worker_volume.mount_path))
    mounts += [(f"dataVolumes[{i}].mountPath", volume.mount_path) for i, volume in enumerate(config.data_volumes)]
    for index, mount in enumerate(settings.volume_mounts):
        path = mount.get("mountPath")
        if not isinstance(path, str) or not path.startswith("/"):
            raise ConfigError(f"{key}.volumeMounts[{index}].mountPath", path, "an absolute path")
        mounts.append((f"{key}.volumeMounts[{index}].mountPath", path))
    return mounts


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def check_mount_paths(config: KompiConfig) -> None:
    """Every mount of the MPI container, per role: kompi's first, then the configured ones in key order."""
    for role, key, settings in (("master", "masterPod", config.master_pod), ("worker", "workerPod", config.worker_pod)):
        kompi = _kompi_mounts(config, role)
        seen: dict[str, str] = {}
        for source, path in _configured_mounts(config, role, key, settings):
            normal = posixpath.normpath(path)
            for owner, directory in kompi:
                if _inside(normal, directory):
                    raise ConfigError(source, path, f"a mount path outside {directory}: kompi mounts {owner} there")
            if normal in seen:
                raise ConfigError(source, path, f"a mount path not used already (kompi:{seen[normal]} uses it)")
            seen[normal] = source


def _check_pod_volumes(key: str, settings: PodSettings, taken: dict[str, str]) -> set[str]:
    names: set[str] = set()
    for index, volume in enumerate(settings.volumes):
        name, where = volume.get("name"), f"{key}.volumes[{index}].name"
        if not isinstance(name, str) or not name:
            raise ConfigError(where, name, "a volume name")
        if name.startswith(naming.RESERVED_VOLUME_PREFIX):
            raise ConfigError(where, name, "a name not starting with 'kompi-' (reserved)")
        if len(name) > 63 or not DNS_LABEL.match(name):
            raise ConfigError(where, name, "a volume name that is a DNS-1123 label (a-z, 0-9, '-'; at most 63)")
        if name in names or name in taken:
            other = f" (kompi:{taken[name]} uses it)" if name in taken else ""
            raise ConfigError(where, name, f"a volume name used once{other}")
        names.add(name)
    for index, mount in enumerate(settings.volume_mounts):
        name = mount.get("name")
        if name not in names and name not in taken:
            raise ConfigError(f"{key}.volumeMounts[{index}].name", name, f"the name of a volume in kompi:{key}.volumes")
    return names


def check_volumes(config: KompiConfig) -> None:
    """User volume names: DNS labels, unique per pod, none of kompi's (the workerVolume template's included)."""
    _check_pod_volumes("masterPod", config.master_pod, {})
    taken = {}
    if config.worker_volume is not None:
        if config.worker_volume.name.startswith(naming.RESERVED_VOLUME_PREFIX):
            raise ConfigError(
                "workerVolume.name", config.worker_volume.name, "a name not starting with 'kompi-' (reserved)"
            )
        taken[config.worker_volume.name] = "workerVolume.name"
    _check_pod_volumes("workerPod", config.worker_pod, taken)
