"""kompi:hostNetwork: master and workers on their nodes' network, for MPI bandwidth (an opt-in; docs/security.md).

A pod on the pod network pays the CNI's per-packet cost on every MPI message; on the node's network it does not.
Only the pod's network changes: the pods still run as the image's user with every capability dropped.
"""

from __future__ import annotations

from typing import Any

from kompi_components import contract
from kompi_components.config.schema import KompiConfig


def pod_fields(config: KompiConfig) -> dict[str, Any]:
    """The pod spec fields of an MPI pod (master, workers, the one-shot master); none on the pod network."""
    if not config.host_network.enabled:
        return {}
    # A host-network pod's default DNS policy is the node's resolv.conf: the master would no longer find the
    # workers through the headless Service.
    return {"hostNetwork": True, "dnsPolicy": "ClusterFirstWithHostNet"}


def ssh_port(config: KompiConfig) -> dict[str, Any]:
    """The sshd port of the MPI container."""
    port: dict[str, Any] = {"name": contract.SSH_PORT_NAME, "containerPort": contract.SSH_PORT}
    if config.host_network.enabled:
        # This is what keeps one kompi pod per node: every pod that runs sshd claims the node's port 2222, so
        # the scheduler's NodePorts filter places at most one of them on a node, the master included (two sshds
        # could not both listen there). With hostNetwork the API server wants hostPort equal to containerPort.
        port["hostPort"] = contract.SSH_PORT
    return port | {"protocol": "TCP"}
