"""Steps kubelet and node ready: the node's kubelet, under a cgroup root of its own, registered as Node
``name``; then the wait until the Node is Ready. Undoing the kubelet drains its pods first (unless the node
loses power), then removes what its pods left: containers, log links, cgroups."""

from __future__ import annotations

import json
import os
import time
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from kompi_components.kube.conditions import is_ready
from kompi_engine.build.node_binaries import KUBELET
from kompi_engine.cluster.pki import issue_kubelet
from kompi_engine.cluster.real_node.errors import RealNodeError
from kompi_engine.cluster.real_node.step import Log, Step

if TYPE_CHECKING:
    from kompi_engine.cluster.real_node.node import RealNode


def kubelet_config(node: RealNode) -> dict[str, Any]:
    a, pki, own = node.addresses, node.cluster_state / "pki", node.state / "pki"
    return {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "address": a.node_ip,
        "port": a.kubelet_port,
        "readOnlyPort": 0,
        "healthzBindAddress": "127.0.0.1",
        "healthzPort": 10248,
        "authentication": {
            "anonymous": {"enabled": False},
            "webhook": {"enabled": True},
            "x509": {"clientCAFile": str(pki / "ca.crt")},
        },
        "authorization": {"mode": "Webhook"},
        "tlsCertFile": str(own / "kubelet-serving.crt"),
        "tlsPrivateKeyFile": str(own / "kubelet-serving.key"),
        "cgroupDriver": "cgroupfs",
        "failCgroupV1": False,  # this host has cgroup v1
        # the node's own hierarchy: a kubelet kills the processes of every pod cgroup under its root that
        # it does not know, so two nodes on one host under the default root kill each other's pods
        "cgroupRoot": f"/{a.cgroup_root}",
        "failSwapOn": False,
        "containerRuntimeEndpoint": f"unix://{node.containerd_socket}",
        "clusterDNS": [a.node_ip],
        "clusterDomain": "cluster.local",
        "resolvConf": str(node.state / "resolv.conf"),
        # a test node on a shared disk: never evict kompi's pods for the host's disk or memory
        "evictionHard": {"memory.available": "1Mi", "nodefs.available": "1%", "imagefs.available": "1%"},
        "imageGCHighThresholdPercent": 100,
        "imageGCLowThresholdPercent": 99,
        "serializeImagePulls": False,
        "podLogsDir": str(node.state / "pod-logs"),
        "syncFrequency": "5s",  # how soon a changed Secret reaches the pods' files
    }


def _kubeconfig(node: RealNode) -> dict[str, Any]:
    """The cluster's kubeconfig with the kubelet's own client certificate."""
    own = node.state / "pki"
    kubeconfig: dict[str, Any] = yaml.safe_load((node.cluster_state / "kubeconfig").read_text())
    certificate = {"client-certificate": str(own / "kubelet-client.crt"), "client-key": str(own / "kubelet-client.key")}
    kubeconfig["users"] = [{"name": "kubelet", "user": certificate}]
    kubeconfig["contexts"][0]["context"]["user"] = "kubelet"
    return kubeconfig


def _up(node: RealNode, log: Log) -> None:
    _make_cgroup_root(node)
    a = node.addresses
    issue_kubelet(node.cluster_state / "pki", node.state / "pki", node.name, a.node_ip)
    (node.state / "resolv.conf").write_text(f"nameserver {a.node_ip}\n")
    (node.state / "kubelet.yaml").write_text(yaml.safe_dump(kubelet_config(node)))
    (node.state / "kubelet.kubeconfig").write_text(yaml.safe_dump(_kubeconfig(node)))
    command = [
        str(node.bin / KUBELET),
        f"--config={node.state / 'kubelet.yaml'}",
        f"--kubeconfig={node.state / 'kubelet.kubeconfig'}",
        f"--root-dir={node.state / 'kubelet'}",
        f"--hostname-override={node.name}",
        f"--node-ip={a.node_ip}",
        "--node-labels=kompi.io/real-node=true",
    ]
    node.processes.start("kubelet", command, None, node.in_netns)


def _down(node: RealNode, graceful: bool) -> None:
    if graceful and any(entry.name == "kubelet" for entry in node.processes.running()):
        # cordoned first, so controllers cannot place the pods again; the kubelet then tears each one
        # down (containers, CNI DEL, the pod's network namespace, unmounts) while everything still runs
        node.kubectl("cordon", node.name, check=False)
        selector = f"--field-selector=spec.nodeName={node.name}"
        node.kubectl("delete", "pods", "-A", selector, "--grace-period=5", "--timeout=60s", check=False)
    node.processes.stop(("kubelet",), node.grace(graceful))
    if any(entry.name == "containerd" for entry in node.processes.running()):
        _remove_leftover_containers(node)
    for link in Path("/var/log/containers").glob("*.log"):
        if link.is_symlink() and str(os.readlink(link)).startswith(str(node.state)):
            link.unlink()
    _remove_pod_cgroups(node)


def _wait_ready(node: RealNode, log: Log) -> None:
    node.wait(f"node {node.name}", 120, lambda: _node_ready(node))
    log(f"real node {node.name} Ready in {time.monotonic() - node.up_started:.1f} s")


def _node_ready(node: RealNode) -> bool:
    status = node.kubectl("get", "node", node.name, "-o", "json", check=False)
    return bool(status) and is_ready(json.loads(status))


def _remove_leftover_containers(node: RealNode) -> None:
    """Whatever containerd still runs (pods the kubelet did not finish): kill each task, remove each
    container, and delete the network namespaces their sandboxes used."""
    pod_namespaces: set[str] = set()
    try:
        containers = node.ctr("containers", "list", "--quiet").split()
    except RealNodeError:
        return
    for container in containers:
        with suppress(RealNodeError, ValueError, KeyError):
            spec = json.loads(node.ctr("containers", "info", container))["Spec"]
            for namespace in spec.get("linux", {}).get("namespaces", []):
                if namespace.get("type") == "network" and namespace.get("path", "").startswith("/var/run/netns/"):
                    pod_namespaces.add(Path(namespace["path"]).name)
        with suppress(RealNodeError):
            node.ctr("tasks", "kill", "--signal", "SIGKILL", container)
        for _ in range(50):
            try:
                node.ctr("tasks", "delete", container)
                break
            except RealNodeError as error:
                if "not found" in str(error):
                    break
                time.sleep(0.1)
        with suppress(RealNodeError):
            node.ctr("containers", "delete", container)
    for namespace in pod_namespaces:
        node.run("ip", "netns", "delete", namespace, check=False)


def _cgroup_hierarchies() -> list[Path]:
    """The host's cgroup hierarchies: each v1 controller's mount and the v2 one (or the v2 root alone)."""
    root = Path("/sys/fs/cgroup")
    if (root / "cgroup.controllers").exists():
        return [root]
    return [path for path in sorted(root.iterdir()) if path.is_dir() and not path.is_symlink()]


def _make_cgroup_root(node: RealNode) -> None:
    """The kubelet wants its cgroupRoot to exist in every hierarchy; a v1 cpuset starts empty."""
    for hierarchy in _cgroup_hierarchies():
        directory = hierarchy / node.addresses.cgroup_root
        directory.mkdir(exist_ok=True)
        for name in ("cpuset.cpus", "cpuset.mems"):
            if (hierarchy / name).exists() and not (directory / name).read_text().strip():
                (directory / name).write_text((hierarchy / name).read_text())


def _remove_pod_cgroups(node: RealNode) -> None:
    """This node's cgroup root in every hierarchy (its kubepods within), deepest first; busy ones stay."""
    for hierarchy in _cgroup_hierarchies():
        top = hierarchy / node.addresses.cgroup_root
        if not top.is_dir():
            continue
        for directory in sorted((d for d in top.rglob("*") if d.is_dir()), key=lambda d: -len(d.parts)):
            with suppress(OSError):
                directory.rmdir()
        with suppress(OSError):
            top.rmdir()


KUBELET_STEP = Step("kubelet", _up, _down)
NODE_READY = Step("node ready", _wait_ready)
