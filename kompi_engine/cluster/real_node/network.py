"""Step network: the node's network namespace, its address on the host's loopback (the API server's way to
the kubelet) and its end of the link between the nodes, routing the other nodes' pod subnets."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kompi_engine.cluster.real_node.step import Log, Step

if TYPE_CHECKING:
    from kompi_engine.cluster.real_node.node import RealNode


def _up(node: RealNode, log: Log) -> None:
    a = node.addresses
    node.run("ip", "netns", "add", a.netns)
    node.run("ip", "-n", a.netns, "link", "set", "lo", "up")
    node.run("ip", "-n", a.netns, "addr", "add", f"{node.service_ip}/32", "dev", "lo")
    node.run("ip", "addr", "add", f"{a.node_ip}/32", "dev", "lo")
    node.fabric.attach(a.netns, a.fabric_port, a.node_ip, {peer.pod_subnet: peer.node_ip for peer in node.peers})
    node.run(*node.in_netns, "sysctl", "-qw", "net.ipv4.ip_forward=1")
    # bridged pod-to-pod packets through iptables, where the NetworkPolicy controller filters them
    node.run(*node.in_netns, "sysctl", "-qw", "net.bridge.bridge-nf-call-iptables=1")


def _down(node: RealNode, graceful: bool) -> None:
    if node.netns_path.exists():
        node.run("ip", "netns", "delete", node.addresses.netns, check=False)  # its end of the link with it
    node.run("ip", "addr", "del", f"{node.addresses.node_ip}/32", "dev", "lo", check=False)


NETWORK = Step("network", _up, _down)
