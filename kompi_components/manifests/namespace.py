"""The namespace, when kompi creates it, with the Pod Security level its pods meet."""

from __future__ import annotations

from kompi_components.manifests.meta import Manifest, manifest
from kompi_components.naming import Names


def namespace(names: Names, level: str) -> Manifest:
    """The namespace, enforcing (and warning at) Pod Security ``level`` (host_network.pod_security_level)."""
    labels = names.labels() | {
        "pod-security.kubernetes.io/enforce": level,
        "pod-security.kubernetes.io/warn": level,
    }
    return manifest("v1", "Namespace", {"name": names.namespace, "labels": labels})
