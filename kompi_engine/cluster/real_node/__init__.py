"""A real node of the local cluster: kubelet, containerd, runc, the bridge CNI, CoreDNS, and kube-router's
NetworkPolicy controller. A cluster has one or several; node 0 also serves the image registry.

Everything node-side runs in a network namespace made here, so nothing listens outside loopback, that
namespace or the link between the nodes (kompi_engine.cluster.fabric):

- the node's address (NODE_IP) is on its ``eth0``, its end of that link; each node routes the other
  nodes' pod subnets to their addresses, so pods on two nodes reach each other unencapsulated;
- the kubelet reaches the API server (127.0.0.1 on the host) through a socat pair over a unix socket, and
  pods reach it at the `kubernetes` Service's IP, which is another address on the namespace's loopback;
- the API server reaches the kubelet (exec, logs) at NODE_IP on the host's loopback, the other way round;
- pods get the namespace's bridge and the node's own CoreDNS on NODE_IP as their nameserver (no
  kube-proxy: kompi's workers are found through a headless Service, which DNS answers without one; a
  DNS server per node, as a node-local cache, so that a lost node takes no other node's DNS with it);
- bridged pod traffic passes the namespace's iptables, where kube-router enforces NetworkPolicy.
- node 0's image registry (node_registry) listens on its NODE_IP inside the namespace for every node's
  containerd, and on the host's loopback through another socat pair for `podman push`.

Each part is a step with its own up and down, in a module of its own (network, proxies, containerd, registry,
images, coredns, kubelet, policy); RealNode (node.py) runs them in order, records each one begun in the
node's state, and `down` undoes exactly those, in reverse.
"""

from kompi_engine.cluster.real_node.addresses import MAX_NODES, NODE_NAME, NodeAddresses, node_state
from kompi_engine.cluster.real_node.errors import RealNodeError
from kompi_engine.cluster.real_node.node import RealNode

__all__ = ["MAX_NODES", "NODE_NAME", "NodeAddresses", "RealNode", "RealNodeError", "node_state"]
