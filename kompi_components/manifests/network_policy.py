"""NetworkPolicies: the cluster's pods talk only to each other, plus an opt-in ssh allow-list."""

from __future__ import annotations

from kompi_components import contract
from kompi_components.config.schema import KompiConfig
from kompi_components.manifests.meta import Manifest, manifest, metadata
from kompi_components.naming import Names


def network_policies(config: KompiConfig, names: Names) -> list[Manifest]:
    if not config.network_policy.enabled:
        return []
    # All ports: MPI opens dynamic TCP ports between ranks.
    same_cluster = {
        "podSelector": {"matchLabels": names.selector()},
        "policyTypes": ["Ingress"],
        "ingress": [{"from": [{"podSelector": {"matchLabels": names.selector()}}]}],
    }
    policies = [
        manifest("networking.k8s.io/v1", "NetworkPolicy", metadata(names, names.network_policy), spec=same_cluster)
    ]
    if config.network_policy.ssh_allow_from:
        ssh_in = {
            "podSelector": {"matchLabels": names.selector("master")},
            "policyTypes": ["Ingress"],
            "ingress": [
                {
                    "from": [{"ipBlock": {"cidr": cidr}} for cidr in config.network_policy.ssh_allow_from],
                    "ports": [{"port": contract.SSH_PORT, "protocol": "TCP"}],
                }
            ],
        }
        policies.append(
            manifest(
                "networking.k8s.io/v1", "NetworkPolicy", metadata(names, names.master_ssh_policy, "master"), spec=ssh_in
            )
        )
    return policies
