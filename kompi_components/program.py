"""The Pulumi program: stack config -> KompiCluster -> stack outputs."""

from __future__ import annotations

import pulumi
from pulumi.runtime.config import CONFIG, get_config_env

from kompi_components.components import KompiCluster
from kompi_components.config import ConfigError, KompiConfig, load_config
from kompi_components.config.namespaces import kompi_config


def stack_config() -> dict[str, object]:
    """Every ``kompi:*`` value Pulumi passed to the program (strings, objects as JSON)."""
    # Every namespace arrives here; a mistyped kompi key (kompy:workers) is refused, not ignored.
    return kompi_config(get_config_env() | CONFIG.get())


def validated_config() -> KompiConfig:
    try:
        return load_config(stack_config())
    except ConfigError as error:
        # RunError: Pulumi prints the one line, no traceback, and nothing has been registered yet.
        raise pulumi.RunError(str(error)) from None


def run() -> KompiCluster:
    config = validated_config()
    cluster = KompiCluster(config.cluster_name, config)
    pulumi.export("namespace", cluster.namespace)
    pulumi.export("masterPod", cluster.master_pod)
    pulumi.export("workers", cluster.workers)
    pulumi.export("totalSlots", cluster.total_slots)
    pulumi.export("hostfile", cluster.hostfile)
    pulumi.export("firstJob", cluster.first_job)
    pulumi.export("sshPublicKey", cluster.ssh_public_key)
    return cluster
