"""The Secret holding the cluster's SSH identity (client key, host key, trust files)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kompi_components.manifests.meta import Manifest, manifest, metadata
from kompi_components.naming import Names


def ssh_secret(names: Names, string_data: Mapping[str, Any] | Any) -> Manifest:
    """``string_data`` maps the contract's SSH file names to contents (a Pulumi secret at `up`)."""
    return manifest("v1", "Secret", metadata(names, names.ssh_secret), type="Opaque", stringData=string_data)
