"""Step proxies: socat pairs over unix sockets between the host's loopback and the node's namespace, for the
kubelet and pods to reach the API server (127.0.0.1 on the host), and the API server the kubelet."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kompi_engine.cluster.real_node.step import Log, Step

if TYPE_CHECKING:
    from kompi_engine.cluster.real_node.node import RealNode

PROCESSES = ("api-proxy-node", "api-proxy-pods", "api-proxy-host", "kubelet-proxy-host", "kubelet-proxy-node")


def _up(node: RealNode, log: Log) -> None:
    a, api = node.addresses, node.apiserver_port
    api_socket, kubelet_socket = node.state / "api.sock", node.state / "kubelet.sock"
    start = node.processes.start
    start("api-proxy-host", ["socat", f"UNIX-LISTEN:{api_socket},fork,unlink-early", f"TCP:127.0.0.1:{api}"])
    node_side = f"TCP-LISTEN:{api},bind=127.0.0.1,reuseaddr,fork"
    start("api-proxy-node", ["socat", node_side, f"UNIX-CONNECT:{api_socket}"], None, node.in_netns)
    pods_side = f"TCP-LISTEN:443,bind={node.service_ip},reuseaddr,fork"
    start("api-proxy-pods", ["socat", pods_side, f"UNIX-CONNECT:{api_socket}"], None, node.in_netns)
    kubelet = f"TCP:{a.node_ip}:{a.kubelet_port}"
    listen = f"UNIX-LISTEN:{kubelet_socket},fork,unlink-early"
    start("kubelet-proxy-node", ["socat", listen, kubelet], None, node.in_netns)
    host_side = f"TCP-LISTEN:{a.kubelet_port},bind={a.node_ip},reuseaddr,fork"
    start("kubelet-proxy-host", ["socat", host_side, f"UNIX-CONNECT:{kubelet_socket}"])


def _down(node: RealNode, graceful: bool) -> None:
    node.processes.stop(PROCESSES, node.grace(graceful))


PROXIES = Step("proxies", _up, _down)
