"""Run a Kubernetes container spec as a podman container, the way kubelet would run it.

``podman_run_args`` turns one container of a pod spec (with the pod's volumes and securityContext)
into ``podman run`` arguments; ``run_pod_like`` starts it. Secret volumes are laid out as kubelet's
atomic writer does (``..data`` symlinks, defaultMode, group = fsGroup with the read-only group bits
kubelet adds), emptyDirs get kubelet's modes, and anything not emulated raises instead of being
silently dropped, so the containers stay faithful to the rendered pods.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.images.podman import Network, PodmanError, exec_in, logs, podman

# containerd's default capabilities that podman does not grant by default.
CONTAINERD_EXTRA_CAPS = ("AUDIT_WRITE", "MKNOD", "NET_RAW")
KNOWN_CONTAINER_KEYS = {
    "name", "image", "imagePullPolicy", "command", "args", "env", "ports", "startupProbe", "readinessProbe",
    "resources", "securityContext", "volumeMounts", "terminationMessagePolicy", "workingDir",
}  # fmt: skip
KNOWN_POD_KEYS = {
    "automountServiceAccountToken", "enableServiceLinks", "securityContext", "initContainers", "containers",
    "volumes", "nodeSelector", "tolerations", "affinity", "imagePullSecrets", "terminationGracePeriodSeconds",
    "schedulerName", "hostname", "subdomain",
}  # fmt: skip
QUANTITY_SUFFIXES = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "k": 10**3, "M": 10**6, "G": 10**9}


class NotEmulated(ValueError):
    """A pod spec field this harness does not reproduce (add it here before relying on it)."""


@dataclass(frozen=True)
class PodPlacement:
    """Where a pod lives on the test network: container name, pod hostname, address, /etc/hosts."""

    container_name: str
    hostname: str
    network: Network
    ip: str
    hosts: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SecurityContext:
    run_as_user: int | None
    run_as_group: int | None
    run_as_non_root: bool
    fs_group: int | None
    supplemental_groups: tuple[int, ...]
    drop: tuple[str, ...]
    add: tuple[str, ...]
    no_new_privileges: bool
    read_only_root: bool
    seccomp: str | None


def security_context(pod_spec: Mapping[str, Any], container: Mapping[str, Any]) -> SecurityContext:
    """Pod-level settings overridden by the container's, as kubelet merges them."""
    pod = pod_spec.get("securityContext", {})
    own = container.get("securityContext", {})
    for key in ("privileged", "procMount", "seLinuxOptions", "appArmorProfile", "windowsOptions"):
        if key in own or key in pod:
            raise NotEmulated(f"securityContext.{key}")
    merged = {**pod, **{k: v for k, v in own.items() if k != "capabilities"}}
    capabilities = own.get("capabilities", {})
    return SecurityContext(
        run_as_user=merged.get("runAsUser"),
        run_as_group=merged.get("runAsGroup"),
        run_as_non_root=bool(merged.get("runAsNonRoot", False)),
        fs_group=pod.get("fsGroup"),
        supplemental_groups=tuple(pod.get("supplementalGroups", ())),
        drop=tuple(capabilities.get("drop", ())),
        add=tuple(capabilities.get("add", ())),
        no_new_privileges=merged.get("allowPrivilegeEscalation") is False,
        read_only_root=bool(merged.get("readOnlyRootFilesystem", False)),
        seccomp=merged.get("seccompProfile", {}).get("type"),
    )


def security_args(context: SecurityContext) -> list[str]:
    if context.run_as_user is None:
        raise NotEmulated("a pod without runAsUser (the image's USER would apply)")
    if context.run_as_non_root and context.run_as_user == 0:
        raise ValueError("runAsNonRoot with runAsUser 0: kubelet would refuse to start this container")
    group = context.run_as_group if context.run_as_group is not None else context.run_as_user
    args = ["--user", f"{context.run_as_user}:{group}"]
    for gid in {g for g in (context.fs_group, *context.supplemental_groups) if g is not None}:
        args += ["--group-add", str(gid)]
    if [cap.upper() for cap in context.drop] == ["ALL"]:
        args += ["--cap-drop", "all"]
    elif context.drop:
        args += [f"--cap-drop={cap}" for cap in context.drop]
    else:
        args += [f"--cap-add={cap}" for cap in CONTAINERD_EXTRA_CAPS]
    args += [f"--cap-add={cap}" for cap in context.add]
    if context.no_new_privileges:
        args += ["--security-opt", "no-new-privileges"]
    if context.read_only_root:
        args.append("--read-only")
    if context.seccomp == "Unconfined":
        args += ["--security-opt", "seccomp=unconfined"]
    elif context.seccomp not in (None, "RuntimeDefault"):
        raise NotEmulated(f"seccompProfile {context.seccomp}")
    return args


def quantity_bytes(quantity: str) -> int:
    for suffix, factor in QUANTITY_SUFFIXES.items():
        if quantity.endswith(suffix):
            return int(quantity[: -len(suffix)]) * factor
    return int(quantity)


def write_secret_volume(root: Path, files: Mapping[str, str], default_mode: int, fs_group: int | None) -> Path:
    """The layout kubelet gives a Secret volume: ``<key> -> ..data/<key>``, ``..data -> ..<timestamp>``.

    Files are owned by root with ``defaultMode``; with an fsGroup kubelet also sets their group to it
    and adds the read-only group bits (0400 becomes 0440), directories get setgid.
    """
    root.mkdir(parents=True)
    stamp = time.strftime("..%Y_%m_%d_%H_%M_%S.000000001")
    data_dir = root / stamp
    data_dir.mkdir()
    for key, content in files.items():
        path = data_dir / key
        path.write_text(content)
        (root / key).symlink_to(f"..data/{key}")
    (root / "..data").symlink_to(stamp)
    group = fs_group if fs_group is not None else 0
    file_mode = default_mode | (0o440 if fs_group is not None else 0)
    for path in data_dir.iterdir():
        os.chown(path, 0, group)
        path.chmod(file_mode)
    dir_mode = 0o755 | (0o2550 if fs_group is not None else 0)
    for directory in (root, data_dir):
        os.chown(directory, 0, group)
        directory.chmod(dir_mode)
    return root


def write_empty_dir(root: Path, fs_group: int | None) -> Path:
    """An emptyDir as kubelet makes it: mode 0777, plus group fsGroup and setgid when one is set."""
    root.mkdir(parents=True)
    root.chmod(0o777)
    if fs_group is not None:
        os.chown(root, 0, fs_group)
        root.chmod(0o2777)
    return root


def volume_args(
    volume: Mapping[str, Any],
    mount: Mapping[str, Any],
    secrets: Mapping[str, Mapping[str, str]],
    fs_group: int | None,
    scratch: Path,
) -> list[str]:
    """podman arguments for one volumeMount of ``volume``."""
    target = mount["mountPath"]
    read_only = bool(mount.get("readOnly", False))
    if "subPath" in mount:
        raise NotEmulated("volumeMounts[].subPath")
    if "secret" in volume:
        spec = volume["secret"]
        if "items" in spec:
            raise NotEmulated("secret volume items")
        source = write_secret_volume(
            scratch / volume["name"], secrets[spec["secretName"]], spec.get("defaultMode", 0o644), fs_group
        )
        return ["--mount", f"type=bind,source={source},destination={target},ro=true"]
    if "emptyDir" in volume:
        spec = volume["emptyDir"]
        if spec.get("medium") == "Memory":
            size = quantity_bytes(spec["sizeLimit"]) if "sizeLimit" in spec else None
            if target == "/dev/shm":
                return ["--shm-size", str(size)] if size else []
            return ["--mount", f"type=tmpfs,destination={target}" + (f",tmpfs-size={size}" if size else "")]
        source = write_empty_dir(scratch / volume["name"], fs_group)
        return ["--mount", f"type=bind,source={source},destination={target},ro={str(read_only).lower()}"]
    raise NotEmulated(f"volume {volume['name']}: only secret and emptyDir volumes are emulated")


def check_known_fields(pod_spec: Mapping[str, Any], container: Mapping[str, Any]) -> None:
    unknown = set(container) - KNOWN_CONTAINER_KEYS
    unknown |= {f"pod.{key}" for key in set(pod_spec) - KNOWN_POD_KEYS}
    if unknown:
        raise NotEmulated(f"fields not emulated: {sorted(unknown)}")
    if pod_spec.get("initContainers"):
        raise NotEmulated("initContainers")


def env_args(container: Mapping[str, Any]) -> list[str]:
    args = []
    for variable in container.get("env", []):
        if "value" not in variable:
            raise NotEmulated(f"env {variable['name']}: only literal values are emulated")
        args += ["--env", f"{variable['name']}={variable['value']}"]
    return args


def podman_run_args(
    pod_spec: Mapping[str, Any],
    container: Mapping[str, Any],
    secrets: Mapping[str, Mapping[str, str]],
    placement: PodPlacement,
    scratch: Path,
    extra_mounts: Sequence[str] = (),
) -> list[str]:
    """The ``podman run`` arguments (after ``run``) for ``container`` of ``pod_spec``."""
    check_known_fields(pod_spec, container)
    context = security_context(pod_spec, container)
    volumes = {volume["name"]: volume for volume in pod_spec.get("volumes", [])}
    args = ["-d", "--name", placement.container_name, "--hostname", placement.hostname]
    args += ["--network", placement.network.name, "--ip", placement.ip, "--pull", "never"]
    for name, address in placement.hosts.items():
        args += ["--add-host", f"{name}:{address}"]
    args += ["--stop-timeout", str(pod_spec.get("terminationGracePeriodSeconds", 30))]
    args += security_args(context) + env_args(container)
    for mount in container.get("volumeMounts", []):
        args += volume_args(volumes[mount["name"]], mount, secrets, context.fs_group, scratch)
    for extra in extra_mounts:
        args += ["--mount", extra]
    if "workingDir" in container:
        args += ["--workdir", container["workingDir"]]
    if "command" in container:
        args += ["--entrypoint", json.dumps(container["command"])]
    return [*args, container["image"], *container.get("args", [])]


def run_pod_like(
    pod_spec: Mapping[str, Any],
    container: Mapping[str, Any],
    secrets: Mapping[str, Mapping[str, str]],
    placement: PodPlacement,
    scratch: Path,
    extra_mounts: Sequence[str] = (),
) -> str:
    """Start the container; returns its podman name."""
    podman("run", *podman_run_args(pod_spec, container, secrets, placement, scratch, extra_mounts))
    return placement.container_name


def wait_ready(container_name: str, container: Mapping[str, Any], timeout: float = 60) -> float:
    """Run the container's startupProbe (else readinessProbe) until it passes; returns the seconds it took.

    Polls faster than periodSeconds to keep the tests short; fails early when the container exits.
    """
    probe = container.get("startupProbe", container["readinessProbe"])["exec"]["command"]
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if exec_in(container_name, probe, timeout=10).returncode == 0:
            return time.monotonic() - start
        state = podman("inspect", "--format", "{{.State.Status}}", container_name).stdout.strip()
        if state != "running":
            raise PodmanError(f"{container_name} is {state} before ready:\n{logs(container_name)}")
        time.sleep(0.1)
    raise PodmanError(f"{container_name} not ready after {timeout}s:\n{logs(container_name)}")
