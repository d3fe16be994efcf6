"""Cluster-wide keys: networkPolicy, sshGateway, sshKey and the master's hostfile updater."""

from __future__ import annotations

from typing import Any

from kompi_components import contract
from kompi_components.migrate.keys import get
from kompi_components.migrate.scalars import flag
from kompi_components.migrate.translation import Translation


def _network_policy(values: dict[str, Any], result: Translation) -> None:
    enabled = get(values, "networkPolicy.enabled")
    if enabled is None:
        result.warn(
            "networkPolicy.enabled",
            "not set (kube-openmpi: no NetworkPolicy); kompi's default makes one: pods accept traffic only "
            "from the cluster's pods",
        )
        return
    result.set("networkPolicy.enabled", flag(enabled, "networkPolicy.enabled"), "networkPolicy.enabled")
    if enabled:
        result.warn(
            "networkPolicy.enabled",
            "kompi's policy closes the master too (kube-openmpi's let anything reach it); "
            "allow ssh clients with kompi:networkPolicy.sshAllowFrom",
        )


def _ssh_gateway(values: dict[str, Any], result: Translation) -> None:
    if values.get("sshGateway") is None:
        return
    if not flag(get(values, "sshGateway.enabled") or False, "sshGateway.enabled"):
        result.accept("sshGateway")
        return
    result.warn(
        "sshGateway",
        f"not supported: kompi makes no NodePort Service; expose the master's sshd (port {contract.SSH_PORT}) "
        "yourself and allow the clients' CIDRs with kompi:networkPolicy.sshAllowFrom",
    )


def _ssh_key(values: dict[str, Any], result: Translation) -> None:
    key = values.get("sshKey")
    if not key:
        if key is not None:
            result.accept("sshKey")
        return
    result.warn(
        "sshKey",
        "not imported: kompi makes the cluster's SSH keys itself and keeps them as Pulumi secrets "
        "(ssh-key.yaml and gen-ssh-key.sh are no longer needed)",
    )


def _hostfile_updater(values: dict[str, Any], result: Translation) -> None:
    if get(values, "mpiMaster.autoUpdateHostfile") is None:
        return
    result.warn(
        "mpiMaster.autoUpdateHostfile",
        f"dropped: kompi's master keeps {contract.HOSTFILE} itself, from the workers' DNS names "
        "(no kubectl polling, no Kubernetes API access)",
    )


def translate_cluster_level(values: dict[str, Any], result: Translation) -> None:
    _network_policy(values, result)
    _ssh_gateway(values, result)
    _ssh_key(values, result)
    _hostfile_updater(values, result)
