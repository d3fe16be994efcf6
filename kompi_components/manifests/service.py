"""The headless Service that gives every ready pod a stable DNS name."""

from __future__ import annotations

from kompi_components import contract
from kompi_components.manifests.meta import Manifest, manifest, metadata
from kompi_components.naming import Names


def headless_service(names: Names) -> Manifest:
    spec = {
        "clusterIP": "None",
        "selector": names.selector(),
        # Only pods whose sshd answers (readiness probe) are published in DNS.
        "publishNotReadyAddresses": False,
        "ports": [
            {
                "name": contract.SSH_PORT_NAME,
                "port": contract.SSH_PORT,
                "targetPort": contract.SSH_PORT_NAME,
                "protocol": "TCP",
            }
        ],
    }
    return manifest("v1", "Service", metadata(names, names.service), spec=spec)
