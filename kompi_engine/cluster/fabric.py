"""The local cluster's datacenter network: one link that joins its real nodes, as a switch joins servers.

A network namespace of its own holds a Linux bridge (the switch); each node's namespace gets one end of
a veth pair as its ``eth0``, with the node's address, and the other end is a port of that bridge. The
link's MTU is a setting (1500, or 9000 for jumbo frames) given to the bridge, both ends of every pair
and the pods' interfaces alike, since pod traffic is routed over the link unencapsulated: each node
routes the other nodes' pod subnets to their addresses, as a cloud VPC's routes or a BGP speaker would.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass

BRIDGE = "fabric"
NODE_INTERFACE = "eth0"  # the node's side of its link, named as a server's first NIC
DEFAULT_MTU = 1500
MTU_RANGE = (1280, 9000)  # IPv6's minimum, jumbo frames


class FabricError(RuntimeError):
    """The link between the nodes cannot be made."""


def check_mtu(mtu: int) -> int:
    low, high = MTU_RANGE
    if not low <= mtu <= high:
        raise FabricError(f"--mtu {mtu}: expected {low} to {high} (1500 Ethernet, 9000 jumbo frames)")
    return mtu


@dataclass(frozen=True)
class Fabric:
    netns: str
    prefix_length: int  # of the nodes' subnet (their addresses share it)
    mtu: int = DEFAULT_MTU

    def up(self) -> None:
        """The switch: its namespace and bridge (idempotent pieces are not; `down` first after a failure)."""
        _ip("netns", "add", self.netns)
        _ip("-n", self.netns, "link", "add", BRIDGE, "mtu", str(self.mtu), "type", "bridge")
        _ip("-n", self.netns, "link", "set", BRIDGE, "up")

    def exists(self) -> bool:
        return self.netns in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()

    def attach(self, node_netns: str, port: str, address: str, routes: dict[str, str]) -> None:
        """Give ``node_netns`` its link: ``eth0`` with ``address`` (the other end is ``port`` on the bridge)
        and a route to each other node's pod subnet (``routes``: subnet -> that node's address)."""
        mtu = str(self.mtu)
        _ip("-n", self.netns, "link", "add", port, "mtu", mtu, "type", "veth", "peer", "name", NODE_INTERFACE,
            "mtu", mtu, "netns", node_netns)  # fmt: skip
        _ip("-n", self.netns, "link", "set", port, "master", BRIDGE, "up")
        _ip("-n", node_netns, "addr", "add", f"{address}/{self.prefix_length}", "dev", NODE_INTERFACE)
        _ip("-n", node_netns, "link", "set", NODE_INTERFACE, "up")
        for subnet, via in routes.items():
            _ip("-n", node_netns, "route", "add", subnet, "via", via, "dev", NODE_INTERFACE)

    def detach(self, port: str) -> None:
        """Unplug a node (its ``eth0`` goes with the pair): a node that lost power or its cable."""
        subprocess.run(["ip", "-n", self.netns, "link", "delete", port], capture_output=True, check=False)

    def down(self) -> None:
        """The switch and every port still on it."""
        if self.exists():
            subprocess.run(["ip", "netns", "delete", self.netns], capture_output=True, check=False)


def _ip(*args: str) -> None:
    result = subprocess.run(["ip", *args], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise FabricError(f"ip {' '.join(args)}: {result.stderr.strip()}")
