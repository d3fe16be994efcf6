"""Step registry: node 0 serves the cluster's image registry (kompi_engine.cluster.node_registry) on its address in
the namespace, for every node's containerd, and on the host's loopback for `podman push`; every node's
containerd trusts it (read at each pull: containerd may run already)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kompi_engine.build.node_binaries import REGISTRY
from kompi_engine.cluster.node_registry import PORT
from kompi_engine.cluster.real_node.step import Log, Step

if TYPE_CHECKING:
    from kompi_engine.cluster.real_node.node import RealNode


def _up(node: RealNode, log: Log) -> None:
    registry = node.registry
    if not node.serves_registry:
        registry.trust(node.state / "containerd" / "certs.d")
        return
    registry.prepare()
    registry.trust(node.state / "containerd" / "certs.d")
    node.processes.start(
        "registry", [str(node.bin / REGISTRY), "serve", str(registry.config_file)], None, node.in_netns
    )
    unix, target = node.state / "registry.sock", f"TCP:{registry.address}"
    node_side = ["socat", f"UNIX-LISTEN:{unix},fork,unlink-early", target]
    node.processes.start("registry-proxy-node", node_side, None, node.in_netns)
    host_side = f"TCP-LISTEN:{PORT},bind={node.addresses.node_ip},reuseaddr,fork"
    node.processes.start("registry-proxy-host", ["socat", host_side, f"UNIX-CONNECT:{unix}"])
    node.wait("registry", 30, registry.answers)
    log(registry.usage())


def _down(node: RealNode, graceful: bool) -> None:
    node.processes.stop(("registry",), node.grace(graceful))
    node.processes.stop(("registry-proxy-host", "registry-proxy-node"), node.grace(graceful))


REGISTRY_STEP = Step("registry", _up, _down)
