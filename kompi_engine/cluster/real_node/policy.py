"""Step network policy: kube-router's NetworkPolicy controller alone, with iptables and ipset rules in the
node's namespace for the pods of this node (no routing, no service proxy, no CNI of its own)."""

from __future__ import annotations

import subprocess
import time
from typing import TYPE_CHECKING

from kompi_engine.build.node_binaries import KUBE_ROUTER
from kompi_engine.cluster.real_node.rbac import kube_router_rbac
from kompi_engine.cluster.real_node.step import Log, Step

if TYPE_CHECKING:
    from kompi_engine.cluster.real_node.node import RealNode


def _up(node: RealNode, log: Log) -> None:
    started = time.monotonic()
    node.apply(kube_router_rbac())
    command = [
        str(node.bin / KUBE_ROUTER),
        f"--kubeconfig={node.cluster_state / 'kube-router.kubeconfig'}",
        "--run-firewall=true",
        "--run-router=false",
        "--run-service-proxy=false",
        "--enable-cni=false",
        f"--hostname-override={node.name}",
        f"--health-port={node.ports.kube_router_health}",
        "--metrics-port=0",
    ]
    node.processes.start("kube-router", command, None, node.in_netns)
    node.wait("kube-router's policy chains", 60, lambda: _chains_exist(node))
    log(f"real node: NetworkPolicy enforced by kube-router after {time.monotonic() - started:.1f} s")


def _chains_exist(node: RealNode) -> bool:
    command = [*node.in_netns, "iptables", "-S", "KUBE-ROUTER-FORWARD"]
    return subprocess.run(command, capture_output=True, text=True, check=False).returncode == 0


def _down(node: RealNode, graceful: bool) -> None:
    node.processes.stop(("kube-router",), node.grace(graceful))


NETWORK_POLICY = Step("network policy", _up, _down)
