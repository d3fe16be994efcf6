"""Security contexts: Pod Security "restricted" by default, root only as an explicit opt-in."""

from __future__ import annotations

from typing import Any

from kompi_components.config.schema import KompiConfig


def pod_security_context(config: KompiConfig) -> dict[str, Any]:
    context: dict[str, Any] = {"seccompProfile": {"type": "RuntimeDefault"}}
    if config.run_as_root:
        return context | {"runAsNonRoot": False, "runAsUser": 0, "runAsGroup": 0, "fsGroup": 0}
    return context | {
        "runAsNonRoot": True,
        "runAsUser": config.run_as_user,
        "runAsGroup": config.run_as_group,
        "fsGroup": config.run_as_group,
    }


def container_security_context(config: KompiConfig) -> dict[str, Any]:
    context: dict[str, Any] = {"allowPrivilegeEscalation": False}
    if config.run_as_root:
        # sshd running as root needs the runtime's default capabilities (setuid, chroot, ...).
        return context
    return context | {"capabilities": {"drop": ["ALL"]}}
