"""The local cluster's ports: on the host, and in each real node's network namespace. A test cluster takes
them all shifted (Ports.shifted), so that it runs beside a user's; a real node derives its own from the
cluster's API server port (Ports.of_apiserver)."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, fields

# Shifts every port of the local cluster that bin/kompi starts or uses (the tests' clusters run beside a user's).
OFFSET_VARIABLE = "KOMPI_LOCAL_PORT_OFFSET"

# in a real node's own network namespace: they never meet the host's
IN_NODE_NAMESPACE = ("coredns_health", "coredns_ready", "kube_router_health")


@dataclass(frozen=True)
class Ports:
    apiserver: int = 16443
    etcd: int = 12379
    etcd_peer: int = 12380
    controller_manager: int = 20257
    scheduler: int = 20259
    gang_scheduler: int = 20261
    kubelet: int = 10250  # a real node's kubelet, at the node's address on the host
    coredns_health: int = 18080
    coredns_ready: int = 18181
    kube_router_health: int = 20244
    kueue_webhook: int = 20263  # with --kueue
    kueue_health: int = 20265

    @classmethod
    def shifted(cls, offset: int) -> Ports:
        """Another set of ports, so a test cluster can run beside a user's."""
        return cls(*(port + offset for port in asdict(cls()).values()))

    @classmethod
    def from_environment(cls) -> Ports:
        """The default ports, or all of them shifted by $KOMPI_LOCAL_PORT_OFFSET."""
        return cls.shifted(int(os.environ.get(OFFSET_VARIABLE) or 0))

    @classmethod
    def of_apiserver(cls, apiserver: int) -> Ports:
        """The ports of the cluster whose API server listens on ``apiserver``."""
        return cls.shifted(apiserver - cls().apiserver)

    @property
    def block(self) -> int:
        """The cluster's number among port blocks (multiples of 100 apart): its real nodes' subnet."""
        return (self.apiserver - Ports().apiserver) // 100 % 250

    def on_host(self, real_nodes: bool) -> dict[str, int]:
        """Name -> port of those the cluster listens on at the host (the kubelet's with real nodes only)."""
        names = [f.name for f in fields(self) if f.name not in IN_NODE_NAMESPACE]
        return {name: getattr(self, name) for name in names if real_nodes or name != "kubelet"}
