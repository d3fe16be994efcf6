"""The Pod Security Standard "restricted" profile (Kubernetes 1.37), one check per rule.

Each check returns the violations it finds in a pod spec; an empty list means the rule holds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

PodSpec = dict[str, Any]
ALLOWED_VOLUME_TYPES = {
    "configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret",
}  # fmt: skip
SAFE_SYSCTLS = {
    "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
}  # fmt: skip
SELINUX_TYPES = {None, "", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}


def containers(spec: PodSpec) -> Iterator[dict[str, Any]]:
    for key in ("initContainers", "containers", "ephemeralContainers"):
        yield from spec.get(key, [])


def _context(container: dict[str, Any]) -> dict[str, Any]:
    return container.get("securityContext") or {}


def host_process(spec: PodSpec) -> list[str]:
    contexts = [spec.get("securityContext") or {}] + [_context(c) for c in containers(spec)]
    return ["hostProcess"] if any((c.get("windowsOptions") or {}).get("hostProcess") for c in contexts) else []


def host_namespaces(spec: PodSpec) -> list[str]:
    return [key for key in ("hostNetwork", "hostPID", "hostIPC") if spec.get(key)]


def privileged(spec: PodSpec) -> list[str]:
    return [c["name"] for c in containers(spec) if _context(c).get("privileged")]


def host_path_volumes(spec: PodSpec) -> list[str]:
    return [v["name"] for v in spec.get("volumes", []) if "hostPath" in v]


def host_ports(spec: PodSpec) -> list[str]:
    return [c["name"] for c in containers(spec) for p in c.get("ports", []) if p.get("hostPort")]


def app_armor(spec: PodSpec) -> list[str]:
    contexts = [spec.get("securityContext") or {}] + [_context(c) for c in containers(spec)]
    bad = [
        c for c in contexts if (c.get("appArmorProfile") or {}).get("type") not in (None, "RuntimeDefault", "Localhost")
    ]
    return ["appArmorProfile"] if bad else []


def selinux(spec: PodSpec) -> list[str]:
    contexts = [spec.get("securityContext") or {}] + [_context(c) for c in containers(spec)]
    options = [c.get("seLinuxOptions") or {} for c in contexts]
    return (
        ["seLinuxOptions"]
        if any(o.get("type") not in SELINUX_TYPES or o.get("user") or o.get("role") for o in options)
        else []
    )


def proc_mount(spec: PodSpec) -> list[str]:
    return [c["name"] for c in containers(spec) if _context(c).get("procMount") not in (None, "Default")]


def sysctls(spec: PodSpec) -> list[str]:
    return [s["name"] for s in (spec.get("securityContext") or {}).get("sysctls", []) if s["name"] not in SAFE_SYSCTLS]


def volume_types(spec: PodSpec) -> list[str]:
    return [v["name"] for v in spec.get("volumes", []) if not (set(v) - {"name"}) <= ALLOWED_VOLUME_TYPES]


def privilege_escalation(spec: PodSpec) -> list[str]:
    return [c["name"] for c in containers(spec) if _context(c).get("allowPrivilegeEscalation") is not False]


def run_as_non_root(spec: PodSpec) -> list[str]:
    pod = (spec.get("securityContext") or {}).get("runAsNonRoot")
    found = []
    for container in containers(spec):
        value = _context(container).get("runAsNonRoot", pod)
        if value is not True:
            found.append(container["name"])
    return found


def run_as_user(spec: PodSpec) -> list[str]:
    pod = spec.get("securityContext") or {}
    found = ["pod"] if pod.get("runAsUser") == 0 else []
    return found + [c["name"] for c in containers(spec) if _context(c).get("runAsUser") == 0]


def seccomp(spec: PodSpec) -> list[str]:
    pod = ((spec.get("securityContext") or {}).get("seccompProfile") or {}).get("type")
    found = []
    for container in containers(spec):
        kind = (_context(container).get("seccompProfile") or {}).get("type", pod)
        if kind not in ("RuntimeDefault", "Localhost"):
            found.append(container["name"])
    return found


def capabilities(spec: PodSpec) -> list[str]:
    found = []
    for container in containers(spec):
        caps = _context(container).get("capabilities") or {}
        if "ALL" not in caps.get("drop", []) or set(caps.get("add", [])) - {"NET_BIND_SERVICE"}:
            found.append(container["name"])
    return found


RULES: dict[str, Callable[[PodSpec], list[str]]] = {
    "HostProcess": host_process,
    "Host Namespaces": host_namespaces,
    "Privileged Containers": privileged,
    "HostPath Volumes": host_path_volumes,
    "Host Ports": host_ports,
    "AppArmor": app_armor,
    "SELinux": selinux,
    "/proc Mount Type": proc_mount,
    "Sysctls": sysctls,
    "Volume Types": volume_types,
    "Privilege Escalation": privilege_escalation,
    "Running as Non-root": run_as_non_root,
    "Running as Non-root user": run_as_user,
    "Seccomp": seccomp,
    "Capabilities": capabilities,
}


def pod_specs(objects: list[dict[str, Any]]) -> Iterator[tuple[str, PodSpec]]:
    """Every pod template in ``objects`` (StatefulSets, Jobs, ...), by object name."""
    for manifest in objects:
        template = (manifest.get("spec") or {}).get("template")
        if template:
            yield f"{manifest['kind']}/{manifest['metadata']['name']}", template["spec"]
