"""The namespace, when kompi creates it, with the Pod Security level its pods meet."""

from __future__ import annotations

from kompi_components.config.schema import KompiConfig
from kompi_components.manifests.meta import Manifest, manifest
from kompi_components.naming import Names


def pod_security_level(config: KompiConfig) -> str:
    """The strictest Pod Security level that the cluster's pods meet."""
    if config.host_network.enabled:
        # Host-network pods, and their hostPort, break "baseline" too.
        return "privileged"
    # Root pods keep the runtime's default capabilities, which "restricted" forbids.
    return "baseline" if config.run_as_root else "restricted"


def namespace(names: Names, level: str) -> Manifest:
    """The namespace, enforcing (and warning at) Pod Security ``level``."""
    labels = names.labels() | {
        "pod-security.kubernetes.io/enforce": level,
        "pod-security.kubernetes.io/warn": level,
    }
    return manifest("v1", "Namespace", {"name": names.namespace, "labels": labels})
