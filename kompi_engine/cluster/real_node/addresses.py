"""Where each real node of a local cluster lives: its name, addresses, ports, pod subnet and state directory."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kompi_engine.cluster.fabric import DEFAULT_MTU, Fabric
from kompi_engine.cluster.ports import Ports

NODE_NAME = "kompi-node"  # node 0's; node N's is kompi-node-N
MAX_NODES = 8


@dataclass(frozen=True)
class NodeAddresses:
    """Where node ``index`` of a cluster lives; derived from the cluster's API port, so a test cluster's
    nodes (other ports) do not collide with a user's."""

    netns: str
    node_ip: str
    kubelet_port: int
    index: int = 0

    @property
    def name(self) -> str:
        return f"{NODE_NAME}-{self.index}" if self.index else NODE_NAME

    @property
    def cgroup_root(self) -> str:
        """The node's cgroup hierarchy (under each of the host's), named as its network namespace."""
        return self.netns

    @property
    def pod_subnet(self) -> str:
        return f"10.88.{self.index}.0/24"

    @property
    def pod_gateway(self) -> str:
        return f"10.88.{self.index}.1"

    @property
    def fabric_port(self) -> str:
        """The node's port on the cluster's switch."""
        return f"n{self.index}"

    @classmethod
    def for_cluster(cls, apiserver_port: int, index: int = 0) -> NodeAddresses:
        # one subnet per port block, shifted ones included
        ports = Ports.of_apiserver(apiserver_port)
        suffix = f"-{index}" if index else ""
        return cls(f"kompi-node-{apiserver_port}{suffix}", f"10.213.{ports.block}.{index + 1}", ports.kubelet, index)

    @staticmethod
    def fabric_for(apiserver_port: int, mtu: int = DEFAULT_MTU) -> Fabric:
        """The link between the cluster's nodes: they share the /24 of their addresses."""
        return Fabric(f"kompi-fabric-{apiserver_port}", 24, mtu)


def node_state(cluster_state: Path, index: int) -> Path:
    return cluster_state / ("node" if index == 0 else f"node-{index}")
