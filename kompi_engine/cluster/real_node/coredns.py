"""Step coredns: the node's own DNS server on its address, pods' nameserver (a DNS server per node, as a
node-local cache, so that a lost node takes no other node's DNS with it)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kompi_engine.build.node_binaries import COREDNS
from kompi_engine.cluster.real_node.rbac import coredns_rbac
from kompi_engine.cluster.real_node.step import Log, Step

if TYPE_CHECKING:
    from kompi_engine.cluster.real_node.node import RealNode


def corefile(node: RealNode) -> str:
    # no cache plugin: answers follow the API at once (a cluster's usual `cache 30` serves an answer for
    # up to its 5 s TTL; kompi's discovery converges that much later there)
    return (
        ".:53 {\n"
        f"    bind {node.addresses.node_ip}\n"
        "    errors\n"
        f"    health 127.0.0.1:{node.ports.coredns_health}\n"
        f"    ready 127.0.0.1:{node.ports.coredns_ready}\n"
        "    kubernetes cluster.local in-addr.arpa ip6.arpa {\n"
        f"        kubeconfig {node.cluster_state / 'coredns.kubeconfig'}\n"
        "        fallthrough in-addr.arpa ip6.arpa\n"
        "    }\n"
        "}\n"
    )


def _up(node: RealNode, log: Log) -> None:
    node.apply(coredns_rbac())
    (node.state / "Corefile").write_text(corefile(node))
    command = [str(node.bin / COREDNS), "-conf", str(node.state / "Corefile")]
    node.processes.start("coredns", command, None, node.in_netns)


def _down(node: RealNode, graceful: bool) -> None:
    node.processes.stop(("coredns",), node.grace(graceful))


COREDNS_STEP = Step("coredns", _up, _down)
