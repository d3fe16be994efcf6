"""A real node of the local cluster: kubelet, containerd, runc, the bridge CNI, CoreDNS, and kube-router's
NetworkPolicy controller. A cluster has one or several; node 0 also serves the image registry.

Everything node-side runs in a network namespace made here, so nothing listens outside loopback, that
namespace or the link between the nodes (kompi_engine.fabric):

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
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kompi_components.kube.conditions import is_ready
from kompi_engine import node_images
from kompi_engine.fabric import DEFAULT_MTU, Fabric
from kompi_engine.kubectl import Kubectl
from kompi_engine.node_binaries import COREDNS, KUBE_ROUTER, KUBELET, PAUSE, REGISTRY
from kompi_engine.node_registry import PORT, NodeRegistry
from kompi_engine.pki import issue_kubelet
from kompi_engine.ports import Ports
from kompi_engine.processes import ProcessTable, wait_until_ready

NODE_NAME = "kompi-node"  # node 0's; node N's is kompi-node-N
MAX_NODES = 8
CNI_PLUGINS = Path("/usr/lib/cni")  # Debian's containernetworking-plugins
HOST_TOOLS = (
    "containerd",
    "containerd-shim-runc-v2",
    "runc",
    "ctr",
    "socat",
    "nsenter",
    "unshare",
    "hostname",
    "ip",
    "iptables",
    "ipset",
)
# the API server's clients first, the runtime after the kubelet, the proxies last
STOP_ORDER: tuple[tuple[str, ...], ...] = (
    ("kube-router",),
    ("kubelet",),
    ("coredns",),
    ("containerd",),
    ("registry",),
    ("registry-proxy-host", "registry-proxy-node"),
    ("api-proxy-node", "api-proxy-pods", "api-proxy-host", "kubelet-proxy-host", "kubelet-proxy-node"),
)
# overlayfs: a container starts from the image's layers without a copy. The native snapshotter copied the
# whole image for every container: 6 GB per pod of the training image (31 GB on disk for three pods, against
# 12 GB). An early node saw kompi containers unable to create files in /tmp with overlayfs; on 2026-12-05
# the MPI and job tests of tests/e2e/node passed with it, and a pod's user created files there.
SNAPSHOTTER = "overlayfs"
UNIX_SOCKET_PATH_MAX = 104  # what containerd accepts (sun_path's portable size)


class RealNodeError(RuntimeError):
    """The real node cannot start, or a host tool it needs is missing."""


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


class RealNode:
    def __init__(
        self,
        state: Path,
        bin_dir: Path,
        apiserver_port: int,
        service_ip: str,
        index: int = 0,
        count: int = 1,
        mtu: int = DEFAULT_MTU,
    ) -> None:
        self.cluster_state = state
        self.state = node_state(state, index)
        self.bin = bin_dir
        self.apiserver_port = apiserver_port
        self.ports = Ports.of_apiserver(apiserver_port)
        self.service_ip = service_ip
        self.addresses = NodeAddresses.for_cluster(apiserver_port, index)
        self.peers = [NodeAddresses.for_cluster(apiserver_port, other) for other in range(count) if other != index]
        self.fabric = NodeAddresses.fabric_for(apiserver_port, mtu)
        self.processes = ProcessTable(self.state)
        first = NodeAddresses.for_cluster(apiserver_port)
        self.registry = NodeRegistry(node_state(state, 0) / "registry", self.cluster_state / "pki", first.node_ip)

    @property
    def name(self) -> str:
        return self.addresses.name

    @property
    def serves_registry(self) -> bool:
        return self.addresses.index == 0

    # ------------------------------------------------------------------ helpers
    @property
    def netns_path(self) -> Path:
        return Path("/run/netns") / self.addresses.netns

    @property
    def in_netns(self) -> list[str]:
        return ["nsenter", f"--net={self.netns_path}"]

    @property
    def containerd_socket(self) -> Path:
        return self.state / "containerd" / "containerd.sock"

    def _kubectl(self, *args: str, check: bool = True, input_text: str | None = None) -> str:
        kubectl = Kubectl(str(self.bin / "kubectl"), str(self.cluster_state / "kubeconfig"))
        return kubectl.stdout(*args, input_text=input_text, check=check, error=RealNodeError)

    def _apply(self, manifests: list[dict[str, Any]]) -> None:
        self._kubectl("apply", "-f", "-", input_text=yaml.safe_dump_all(manifests))

    def _ctr(self, *args: str) -> str:
        command = ["ctr", "--address", str(self.containerd_socket), "--namespace", "k8s.io", *args]
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise RealNodeError(f"ctr {' '.join(args[:2])}: {result.stderr.strip()}")
        return result.stdout

    @staticmethod
    def _run(*command: str, check: bool = True) -> None:
        result = subprocess.run(list(command), capture_output=True, text=True, check=False)
        if check and result.returncode != 0:
            raise RealNodeError(f"{' '.join(command)}: {result.stderr.strip()}")

    def check_host(self) -> None:
        """The host tools and privileges a real node needs, named when missing."""
        longest = f"{self.containerd_socket}.ttrpc"  # the longest unix socket containerd opens
        if len(longest) > UNIX_SOCKET_PATH_MAX:
            raise RealNodeError(
                f"the state directory {self.cluster_state} is too deep for containerd's sockets ({longest} has "
                f"{len(longest)} characters, at most {UNIX_SOCKET_PATH_MAX}): use a shorter one (--dir, XDG_STATE_HOME)"
            )
        missing = [tool for tool in HOST_TOOLS if shutil.which(tool) is None]
        missing += [f"{CNI_PLUGINS}/{plugin}" for plugin in ("bridge", "host-local", "loopback")]
        missing = [item for item in missing if not item.startswith("/") or not Path(item).exists()]
        if missing:
            raise RealNodeError(
                f"a real node needs {', '.join(missing)}: apt-get install containerd runc containernetworking-plugins"
                " socat iproute2 iptables ipset"
            )
        if os.geteuid() != 0:
            raise RealNodeError("a real node runs a kubelet and containerd: run as root")
        for binary in (KUBELET, COREDNS, PAUSE, KUBE_ROUTER, *([REGISTRY] if self.serves_registry else [])):
            if not (self.bin / binary).exists():
                raise RealNodeError(f"missing {binary} in {self.bin}: run bin/kompi engine build")

    # ------------------------------------------------------------------ up
    def up(self, log: Callable[[str], None], image_names: Sequence[str] | None = None) -> None:
        """Start the node with ``image_names`` loaded (default: every localhost/kompi image podman has but the
        training images, 6 GB each: `up --local` of a stack that names one loads it)."""
        self.check_host()
        images = self._from_podman(image_names)
        if self.netns_path.exists():
            raise RealNodeError(f"network namespace {self.addresses.netns} exists: bin/kompi local down first")
        if not self.fabric.exists():
            self.fabric.up()  # the first node's; the cluster removes it after the last node
        started = time.monotonic()
        for directory in ("containerd", "kubelet", "cni/net.d", "pki", "images", "pod-logs"):
            (self.state / directory).mkdir(parents=True, exist_ok=True)
        self.processes.file.unlink(missing_ok=True)
        steps: list[tuple[str, Callable[[], None]]] = [
            ("network", self._network),
            ("proxies", self._proxies),
            ("containerd", self._containerd),
            ("registry", lambda: self._registry(log)),
            ("images", lambda: self._load_images(images, log)),
            ("coredns", self._coredns),
            ("kubelet", self._kubelet),
            ("node ready", lambda: self._wait_ready(started, log)),
            ("network policy", lambda: self._policy_controller(log)),
        ]
        self.steps_file.write_text("[]")
        done: list[str] = []
        for name, step in steps:
            try:
                step()
            except BaseException as error:
                log(f"real node {self.name}: {name} failed; stopping what ran ({', '.join(done) or 'nothing'})")
                self.down()
                if isinstance(error, Exception):
                    raise RealNodeError(f"real node {self.name}, step {name}: {error}") from error
                raise
            done.append(name)
            self.steps_file.write_text(json.dumps(done))

    @property
    def steps_file(self) -> Path:
        """The steps of the last `up` that completed, in order (network, proxies, ... network policy)."""
        return self.state / "steps.json"

    def steps_done(self) -> list[str]:
        return list(json.loads(self.steps_file.read_text())) if self.steps_file.exists() else []

    def _network(self) -> None:
        a = self.addresses
        self._run("ip", "netns", "add", a.netns)
        self._run("ip", "-n", a.netns, "link", "set", "lo", "up")
        self._run("ip", "-n", a.netns, "addr", "add", f"{self.service_ip}/32", "dev", "lo")
        self._run("ip", "addr", "add", f"{a.node_ip}/32", "dev", "lo")  # the API server's way to the kubelet
        self.fabric.attach(a.netns, a.fabric_port, a.node_ip, {peer.pod_subnet: peer.node_ip for peer in self.peers})
        self._run(*self.in_netns, "sysctl", "-qw", "net.ipv4.ip_forward=1")
        # bridged pod-to-pod packets through iptables, where the NetworkPolicy controller filters them
        self._run(*self.in_netns, "sysctl", "-qw", "net.bridge.bridge-nf-call-iptables=1")

    def _proxies(self) -> None:
        a, api = self.addresses, self.apiserver_port
        api_socket, kubelet_socket = self.state / "api.sock", self.state / "kubelet.sock"
        self.processes.start(
            "api-proxy-host", ["socat", f"UNIX-LISTEN:{api_socket},fork,unlink-early", f"TCP:127.0.0.1:{api}"]
        )
        node_side = f"TCP-LISTEN:{api},bind=127.0.0.1,reuseaddr,fork"
        self.processes.start("api-proxy-node", ["socat", node_side, f"UNIX-CONNECT:{api_socket}"], None, self.in_netns)
        pods_side = f"TCP-LISTEN:443,bind={self.service_ip},reuseaddr,fork"
        self.processes.start("api-proxy-pods", ["socat", pods_side, f"UNIX-CONNECT:{api_socket}"], None, self.in_netns)
        kubelet = f"TCP:{a.node_ip}:{a.kubelet_port}"
        self.processes.start(
            "kubelet-proxy-node",
            ["socat", f"UNIX-LISTEN:{kubelet_socket},fork,unlink-early", kubelet],
            None,
            self.in_netns,
        )
        host_side = f"TCP-LISTEN:{a.kubelet_port},bind={a.node_ip},reuseaddr,fork"
        self.processes.start("kubelet-proxy-host", ["socat", host_side, f"UNIX-CONNECT:{kubelet_socket}"])

    def _containerd(self) -> None:
        cni = {
            "cniVersion": "0.4.0",
            "name": "kompi-node",
            "type": "bridge",
            "bridge": "cni0",
            "isGateway": True,
            "ipMasq": False,  # pod addresses are routed between the nodes, and there is no uplink beyond them
            "hairpinMode": True,
            "mtu": self.fabric.mtu,  # the link's: pod packets cross it unencapsulated
            "ipam": {
                "type": "host-local",
                "dataDir": str(self.state / "cni" / "ipam"),
                "ranges": [[{"subnet": self.addresses.pod_subnet, "gateway": self.addresses.pod_gateway}]],
                "routes": [{"dst": "0.0.0.0/0"}],
            },
        }
        (self.state / "cni" / "net.d" / "10-kompi-node.conf").write_text(json.dumps(cni, indent=1))
        root = self.state / "containerd"
        cri = {
            "sandbox_image": node_images.PAUSE_IMAGE,
            # root here lacks CAP_SYS_RESOURCE: runc cannot set the negative oom_score_adj the CRI asks
            # for the sandbox ("can't get final child's PID from pipe: EOF"); clamp it to containerd's own
            "restrict_oom_score_adj": True,
            "containerd": {
                "snapshotter": SNAPSHOTTER,
                # a pulled layer's blob goes once it is unpacked into the snapshot: a node keeps one copy of an
                # image (6 GB for the training image) and not two; nothing here reads the blobs again
                "discard_unpacked_layers": True,
                "default_runtime_name": "runc",
                "runtimes": {
                    "runc": {
                        "runtime_type": "io.containerd.runc.v2",
                        "options": {"SystemdCgroup": False, "BinaryName": shutil.which("runc")},
                    }
                },
            },
            "cni": {"bin_dir": str(CNI_PLUGINS), "conf_dir": str(self.state / "cni" / "net.d")},
            "registry": {"config_path": str(root / "certs.d")},
        }
        config = {
            "version": 2,
            "root": str(root / "root"),
            "state": str(root / "state"),
            "grpc": {"address": str(self.containerd_socket)},
            "disabled_plugins": [
                f"io.containerd.snapshotter.v1.{name}" for name in ("aufs", "btrfs", "zfs", "devmapper")
            ],
            "plugins": {"io.containerd.grpc.v1.cri": cri},
        }
        (root / "config.toml").write_text(_toml(config))
        # A UTS namespace of its own too, named as the node: host-network pods share their runtime's hostname,
        # and Open MPI 5 merged two nodes that reported the same one (the host's) into one and hung.
        own_hostname = ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$@"', self.name]
        command = ["containerd", "--config", str(root / "config.toml")]
        self.containerd_socket.unlink(missing_ok=True)  # a node that lost power left its socket behind
        self.processes.start("containerd", command, None, [*self.in_netns, *own_hostname])
        self._wait("containerd", 30, self._containerd_answers)

    def _containerd_answers(self) -> bool:
        with socket.socket(socket.AF_UNIX) as probe:
            return probe.connect_ex(str(self.containerd_socket)) == 0

    def _registry(self, log: Callable[[str], None]) -> None:
        """Node 0: the registry in the namespace, and its address on the host's loopback for `podman push`.
        Every node: containerd's trust in it (read at each pull: containerd may run already)."""
        registry = self.registry
        if not self.serves_registry:
            registry.trust(self.state / "containerd" / "certs.d")
            return
        registry.prepare()
        registry.trust(self.state / "containerd" / "certs.d")
        self.processes.start(
            "registry", [str(self.bin / REGISTRY), "serve", str(registry.config_file)], None, self.in_netns
        )
        socket, target = self.state / "registry.sock", f"TCP:{registry.address}"
        node_side = ["socat", f"UNIX-LISTEN:{socket},fork,unlink-early", target]
        self.processes.start("registry-proxy-node", node_side, None, self.in_netns)
        host_side = f"TCP-LISTEN:{PORT},bind={self.addresses.node_ip},reuseaddr,fork"
        self.processes.start("registry-proxy-host", ["socat", host_side, f"UNIX-CONNECT:{socket}"])
        self._wait("registry", 30, registry.answers)
        log(registry.usage())

    def load(self, image_names: Sequence[str], log: Callable[[str], None]) -> None:
        """Load ``image_names`` from podman's store into this running node; those it has are not loaded again."""
        self._load_images(self._from_podman(image_names), log)

    @staticmethod
    def _from_podman(image_names: Sequence[str] | None) -> dict[str, str]:
        """Name -> podman image id of ``image_names``, or of every kompi image but the training ones."""
        images = node_images.kompi_images()
        if image_names is None:
            return {name: image_id for name, image_id in images.items() if not node_images.is_training_image(name)}
        missing = sorted(set(image_names) - set(images))
        if missing:
            raise RealNodeError(f"no image {', '.join(missing)} in podman's store: build it with images/build.sh")
        return {name: images[name] for name in image_names}

    def _load_images(self, images: dict[str, str], log: Callable[[str], None]) -> None:
        """The pause image and ``images`` (name -> podman image id); an image already loaded with the same
        id (containerd's store outlives `down`) is not loaded again."""
        archives = self.state / "images"
        pause = archives / "pause.tar"
        node_images.write_pause_archive(self.bin / PAUSE, pause)
        self._ctr("images", "import", "--snapshotter", SNAPSHOTTER, str(pause))
        loaded_file = archives / "loaded.json"
        loaded = json.loads(loaded_file.read_text()) if loaded_file.exists() else {}
        present = set(self._ctr("images", "ls", "--quiet").split())
        by_id: dict[str, list[str]] = {}
        for name, image_id in sorted(images.items()):
            if loaded.get(name) != image_id or name not in present:
                by_id.setdefault(image_id, []).append(name)
        for image_id, names in by_id.items():
            began = time.monotonic()
            archive = archives / "image.tar"
            node_images.save_image(names[0], archive)
            self._ctr("images", "import", "--snapshotter", SNAPSHOTTER, str(archive))
            archive.unlink()
            for other in names[1:]:
                self._ctr("images", "tag", "--force", names[0], other)
            loaded |= dict.fromkeys(names, image_id)
            loaded_file.write_text(json.dumps(loaded, indent=1))
            log(f"real node: loaded {', '.join(names)} in {time.monotonic() - began:.1f} s")

    def _coredns(self) -> None:
        self._apply(coredns_rbac())
        # no cache plugin: answers follow the API at once (a cluster's usual `cache 30` serves an answer for
        # up to its 5 s TTL; kompi's discovery converges that much later there)
        corefile = (
            ".:53 {\n"
            f"    bind {self.addresses.node_ip}\n"
            "    errors\n"
            f"    health 127.0.0.1:{self.ports.coredns_health}\n"
            f"    ready 127.0.0.1:{self.ports.coredns_ready}\n"
            "    kubernetes cluster.local in-addr.arpa ip6.arpa {\n"
            f"        kubeconfig {self.cluster_state / 'coredns.kubeconfig'}\n"
            "        fallthrough in-addr.arpa ip6.arpa\n"
            "    }\n"
            "}\n"
        )
        (self.state / "Corefile").write_text(corefile)
        command = [str(self.bin / COREDNS), "-conf", str(self.state / "Corefile")]
        self.processes.start("coredns", command, None, self.in_netns)

    def _cgroup_root(self) -> None:
        """The kubelet wants its cgroupRoot to exist in every hierarchy; a v1 cpuset starts empty."""
        for hierarchy in _cgroup_hierarchies():
            directory = hierarchy / self.addresses.cgroup_root
            directory.mkdir(exist_ok=True)
            for name in ("cpuset.cpus", "cpuset.mems"):
                if (hierarchy / name).exists() and not (directory / name).read_text().strip():
                    (directory / name).write_text((hierarchy / name).read_text())

    def _kubelet(self) -> None:
        self._cgroup_root()
        a, pki, own = self.addresses, self.cluster_state / "pki", self.state / "pki"
        issue_kubelet(pki, own, self.name, a.node_ip)
        (self.state / "resolv.conf").write_text(f"nameserver {a.node_ip}\n")
        config = {
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
            "cgroupRoot": f"/{self.addresses.cgroup_root}",
            "failSwapOn": False,
            "containerRuntimeEndpoint": f"unix://{self.containerd_socket}",
            "clusterDNS": [a.node_ip],
            "clusterDomain": "cluster.local",
            "resolvConf": str(self.state / "resolv.conf"),
            # a test node on a shared disk: never evict kompi's pods for the host's disk or memory
            "evictionHard": {"memory.available": "1Mi", "nodefs.available": "1%", "imagefs.available": "1%"},
            "imageGCHighThresholdPercent": 100,
            "imageGCLowThresholdPercent": 99,
            "serializeImagePulls": False,
            "podLogsDir": str(self.state / "pod-logs"),
            "syncFrequency": "5s",  # how soon a changed Secret reaches the pods' files
        }
        (self.state / "kubelet.yaml").write_text(yaml.safe_dump(config))
        kubeconfig = yaml.safe_load((self.cluster_state / "kubeconfig").read_text())
        kubeconfig["users"] = [
            {
                "name": "kubelet",
                "user": {
                    "client-certificate": str(own / "kubelet-client.crt"),
                    "client-key": str(own / "kubelet-client.key"),
                },
            }
        ]
        kubeconfig["contexts"][0]["context"]["user"] = "kubelet"
        (self.state / "kubelet.kubeconfig").write_text(yaml.safe_dump(kubeconfig))
        command = [
            str(self.bin / KUBELET),
            f"--config={self.state / 'kubelet.yaml'}",
            f"--kubeconfig={self.state / 'kubelet.kubeconfig'}",
            f"--root-dir={self.state / 'kubelet'}",
            f"--hostname-override={self.name}",
            f"--node-ip={a.node_ip}",
            "--node-labels=kompi.io/real-node=true",
        ]
        self.processes.start("kubelet", command, None, self.in_netns)

    def _policy_controller(self, log: Callable[[str], None]) -> None:
        """kube-router's NetworkPolicy controller only: iptables and ipset rules in the node's namespace
        for the pods of this node (no routing, no service proxy, no CNI of its own)."""
        started = time.monotonic()
        self._apply(kube_router_rbac())
        command = [
            str(self.bin / KUBE_ROUTER),
            f"--kubeconfig={self.cluster_state / 'kube-router.kubeconfig'}",
            "--run-firewall=true",
            "--run-router=false",
            "--run-service-proxy=false",
            "--enable-cni=false",
            f"--hostname-override={self.name}",
            f"--health-port={self.ports.kube_router_health}",
            "--metrics-port=0",
        ]
        self.processes.start("kube-router", command, None, self.in_netns)
        self._wait("kube-router's policy chains", 60, self._policy_chains_exist)
        log(f"real node: NetworkPolicy enforced by kube-router after {time.monotonic() - started:.1f} s")

    def _policy_chains_exist(self) -> bool:
        result = subprocess.run(
            [*self.in_netns, "iptables", "-S", "KUBE-ROUTER-FORWARD"], capture_output=True, text=True, check=False
        )
        return result.returncode == 0

    def _node_ready(self) -> bool:
        status = self._kubectl("get", "node", self.name, "-o", "json", check=False)
        if not status:
            return False
        return is_ready(json.loads(status))

    def _wait_ready(self, started: float, log: Callable[[str], None]) -> None:
        self._wait(f"node {self.name}", 120, self._node_ready)
        log(f"real node {self.name} Ready in {time.monotonic() - started:.1f} s")

    def _wait(self, what: str, timeout: float, ready: Callable[[], bool]) -> None:
        wait_until_ready(what, timeout, ready, self.processes, RealNodeError)

    # ------------------------------------------------------------------ down
    def in_use(self) -> bool:
        """Whether an `up` left anything to stop: processes, or the namespace of a failed `up`."""
        return bool(self.processes.entries()) or self.netns_path.exists()

    def down(self) -> list[str]:
        """Stop the node's pods, then its processes; unmount, delete the namespaces, the host address and the
        Node object."""
        running = {entry.name for entry in self.processes.running()}
        if "kubelet" in running:
            # cordoned first, so controllers cannot place the pods again; the kubelet then tears each one
            # down (containers, CNI DEL, the pod's network namespace, unmounts) while everything still runs
            self._kubectl("cordon", self.name, check=False)
            selector = f"--field-selector=spec.nodeName={self.name}"
            self._kubectl("delete", "pods", "-A", selector, "--grace-period=5", "--timeout=60s", check=False)
        stopped = self._stop(grace=10.0)
        self._kubectl("delete", "node", self.name, "--ignore-not-found", check=False)
        self.steps_file.unlink(missing_ok=True)
        return stopped

    def power_off(self) -> list[str]:
        """The node as a machine that lost power: every container and process killed at once, its link gone;
        the Node object and its pods stay, for Kubernetes to find the node lost. `up` starts it again (its
        images and containerd's store kept), and the kubelet then starts the pods still bound to it."""
        return self._stop(grace=0.0)

    def _stop(self, grace: float) -> list[str]:
        if any(entry.name == "containerd" for entry in self.processes.running()):
            self._remove_leftover_containers()
        stopped: list[str] = []
        for group in STOP_ORDER:
            stopped += self.processes.stop(group, grace)
        self._kill_shims()
        self._unmount()
        for link in Path("/var/log/containers").glob("*.log"):
            if link.is_symlink() and str(os.readlink(link)).startswith(str(self.state)):
                link.unlink()
        if self.netns_path.exists():
            self._run("ip", "netns", "delete", self.addresses.netns, check=False)  # its end of the link with it
        self._run("ip", "addr", "del", f"{self.addresses.node_ip}/32", "dev", "lo", check=False)
        self._remove_pod_cgroups()
        return stopped

    def _remove_leftover_containers(self) -> None:
        """Whatever containerd still runs (pods the kubelet did not finish): kill each task, remove each
        container, and delete the network namespaces their sandboxes used."""
        pod_namespaces: set[str] = set()
        try:
            containers = self._ctr("containers", "list", "--quiet").split()
        except RealNodeError:
            return
        for container in containers:
            with suppress(RealNodeError, ValueError, KeyError):
                spec = json.loads(self._ctr("containers", "info", container))["Spec"]
                for namespace in spec.get("linux", {}).get("namespaces", []):
                    if namespace.get("type") == "network" and namespace.get("path", "").startswith("/var/run/netns/"):
                        pod_namespaces.add(Path(namespace["path"]).name)
            with suppress(RealNodeError):
                self._ctr("tasks", "kill", "--signal", "SIGKILL", container)
            for _ in range(50):
                try:
                    self._ctr("tasks", "delete", container)
                    break
                except RealNodeError as error:
                    if "not found" in str(error):
                        break
                    time.sleep(0.1)
            with suppress(RealNodeError):
                self._ctr("containers", "delete", container)
        for namespace in pod_namespaces:
            self._run("ip", "netns", "delete", namespace, check=False)

    def _kill_shims(self) -> None:
        """containerd's shims outlive it (they keep containers running across restarts): stop ours."""
        marker = str(self.containerd_socket)
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                command = (proc / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if command and command[0].endswith(b"containerd-shim-runc-v2") and marker.encode() in command:
                with suppress(ProcessLookupError):
                    os.kill(int(proc.name), 9)

    def _unmount(self) -> None:
        prefix = str(self.state) + "/"
        mounts = [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()]
        for mount in sorted((m for m in mounts if m.startswith(prefix)), reverse=True):
            subprocess.run(["umount", "-l", mount], capture_output=True, check=False)

    def _remove_pod_cgroups(self) -> None:
        """This node's cgroup root in every hierarchy (its kubepods within), deepest first; busy ones stay."""
        for hierarchy in _cgroup_hierarchies():
            top = hierarchy / self.addresses.cgroup_root
            if not top.is_dir():
                continue
            for directory in sorted((d for d in top.rglob("*") if d.is_dir()), key=lambda d: -len(d.parts)):
                with suppress(OSError):
                    directory.rmdir()
            with suppress(OSError):
                top.rmdir()


def _cgroup_hierarchies() -> list[Path]:
    """The host's cgroup hierarchies: each v1 controller's mount and the v2 one (or the v2 root alone)."""
    root = Path("/sys/fs/cgroup")
    if (root / "cgroup.controllers").exists():
        return [root]
    return [path for path in sorted(root.iterdir()) if path.is_dir() and not path.is_symlink()]


def _cluster_role(name: str, rules: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A ClusterRole with RULES and its binding to the user NAME (the client certificate's CN)."""
    group = "rbac.authorization.k8s.io"
    return [
        {"apiVersion": f"{group}/v1", "kind": "ClusterRole", "metadata": {"name": name}, "rules": rules},
        {
            "apiVersion": f"{group}/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": name},
            "roleRef": {"apiGroup": group, "kind": "ClusterRole", "name": name},
            "subjects": [{"apiGroup": group, "kind": "User", "name": name}],
        },
    ]


def kube_router_rbac() -> list[dict[str, Any]]:
    """What kube-router's policy controller reads (and the node annotations it writes)."""
    read = ["get", "list", "watch"]
    return _cluster_role(
        "kompi:kube-router",
        [
            {"apiGroups": [""], "resources": ["pods", "namespaces", "services", "endpoints"], "verbs": read},
            {"apiGroups": [""], "resources": ["nodes"], "verbs": [*read, "patch", "update"]},
            {"apiGroups": ["networking.k8s.io"], "resources": ["networkpolicies"], "verbs": read},
            {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": read},
        ],
    )


def coredns_rbac() -> list[dict[str, Any]]:
    """What CoreDNS' kubernetes plugin reads, for its own user (not an administrator's)."""
    return _cluster_role(
        "kompi:coredns",
        [
            {"apiGroups": [""], "resources": ["services", "endpoints", "namespaces"], "verbs": ["list", "watch"]},
            {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["list", "watch"]},
        ],
    )


def _toml(config: dict[str, object], prefix: str = "") -> str:
    """The small TOML subset containerd's config needs: scalars, lists of strings and nested tables."""
    lines, tables = [], []
    for key, value in config.items():
        if isinstance(value, dict):
            tables.append((key, value))
        else:
            lines.append(f"{key} = {json.dumps(value)}")
    text = "\n".join(lines) + ("\n" if lines else "")
    for key, value in tables:
        name = f"{prefix}.{_toml_key(key)}" if prefix else _toml_key(key)
        text += f"\n[{name}]\n" + _toml(value, name)
    return text


def _toml_key(key: str) -> str:
    return f'"{key}"' if "." in key else key
