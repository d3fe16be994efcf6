"""One real node for the local cluster: kubelet, containerd, runc, the bridge CNI, CoreDNS, and
kube-router's NetworkPolicy controller.

Everything node-side runs in a network namespace made here, so nothing listens outside loopback or that
namespace:

- the node's address (NODE_IP) is on the namespace's loopback (this kernel has no dummy device);
- the kubelet reaches the API server (127.0.0.1 on the host) through a socat pair over a unix socket, and
  pods reach it at the `kubernetes` Service's IP, which is another address on the namespace's loopback;
- the API server reaches the kubelet (exec, logs) at NODE_IP on the host's loopback, the other way round;
- pods get the namespace's bridge and CoreDNS on NODE_IP as their nameserver (no kube-proxy: kompi's
  workers are found through a headless Service, which DNS answers without one);
- bridged pod traffic passes the namespace's iptables, where kube-router enforces NetworkPolicy.
- an image registry (node_registry) listens on NODE_IP inside the namespace for containerd, and on the
  host's loopback through another socat pair for `podman push`.
"""

from __future__ import annotations

import json
import os
import shutil
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
from kompi_engine.node_binaries import COREDNS, KUBE_ROUTER, KUBELET, PAUSE, REGISTRY
from kompi_engine.node_registry import PORT, NodeRegistry
from kompi_engine.pki import issue_kubelet
from kompi_engine.processes import ProcessTable

NODE_NAME = "kompi-node"
POD_SUBNET = "10.88.0.0/24"  # the bridge inside the namespace; pods of two nodes never meet
POD_GATEWAY = "10.88.0.1"
CNI_PLUGINS = Path("/usr/lib/cni")  # Debian's containernetworking-plugins
HOST_TOOLS = ("containerd", "containerd-shim-runc-v2", "runc", "ctr", "socat", "nsenter", "ip", "iptables", "ipset")
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
# containerd's overlayfs snapshotter left kompi containers unable to create files in /tmp here (Open MPI
# then fails); the native snapshotter copies layers instead and works
SNAPSHOTTER = "native"
UNIX_SOCKET_PATH_MAX = 104  # what containerd accepts (sun_path's portable size)


class RealNodeError(RuntimeError):
    """The real node cannot start, or a host tool it needs is missing."""


@dataclass(frozen=True)
class NodeAddresses:
    """Where this node lives; derived from the cluster's API port, so a test cluster's node (other
    ports) does not collide with a user's."""

    netns: str
    node_ip: str
    kubelet_port: int

    @property
    def cgroup_root(self) -> str:
        """The node's cgroup hierarchy (under each of the host's), named as its network namespace."""
        return self.netns

    @classmethod
    def for_cluster(cls, apiserver_port: int) -> NodeAddresses:
        # one per port block, shifted ones included (blocks are multiples of 100 apart)
        index = (apiserver_port - 16443) // 100 % 250
        return cls(f"kompi-node-{apiserver_port}", f"10.213.{index}.1", 10250 + apiserver_port - 16443)


class RealNode:
    def __init__(self, state: Path, bin_dir: Path, apiserver_port: int, service_ip: str) -> None:
        self.cluster_state = state
        self.state = state / "node"
        self.bin = bin_dir
        self.apiserver_port = apiserver_port
        self.service_ip = service_ip
        self.addresses = NodeAddresses.for_cluster(apiserver_port)
        self.processes = ProcessTable(self.state)
        self.registry = NodeRegistry(self.state / "registry", self.cluster_state / "pki", self.addresses.node_ip)

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
        command = [str(self.bin / "kubectl"), "--kubeconfig", str(self.cluster_state / "kubeconfig"), *args]
        result = subprocess.run(command, input=input_text, capture_output=True, text=True, check=False)
        if check and result.returncode != 0:
            raise RealNodeError(f"kubectl {' '.join(args[:3])}: {result.stderr.strip()}")
        return result.stdout

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
        for binary in (KUBELET, COREDNS, PAUSE, KUBE_ROUTER, REGISTRY):
            if not (self.bin / binary).exists():
                raise RealNodeError(f"missing {binary} in {self.bin}: run bin/kompi engine build")

    # ------------------------------------------------------------------ up
    def up(self, log: Callable[[str], None], image_names: Sequence[str] | None = None) -> None:
        """Start the node with ``image_names`` loaded (default: every localhost/kompi image podman has)."""
        self.check_host()
        images = node_images.kompi_images()
        if image_names is not None:
            missing = sorted(set(image_names) - set(images))
            if missing:
                raise RealNodeError(f"no image {', '.join(missing)} in podman's store: build it with images/build.sh")
            images = {name: images[name] for name in image_names}
        if self.netns_path.exists():
            raise RealNodeError(f"network namespace {self.addresses.netns} exists: bin/kompi local down first")
        started = time.monotonic()
        for directory in ("containerd", "kubelet", "cni/net.d", "pki", "images", "pod-logs"):
            (self.state / directory).mkdir(parents=True, exist_ok=True)
        self.processes.file.unlink(missing_ok=True)
        try:
            self._network()
            self._proxies()
            self._containerd()
            self._registry(log)
            self._load_images(images, log)
            self._coredns()
            self._kubelet()
            self._wait_ready(started, log)
            self._policy_controller(log)
        except BaseException:
            log("real node: start failed, stopping what was started")
            self.down()
            raise

    def _network(self) -> None:
        a = self.addresses
        self._run("ip", "netns", "add", a.netns)
        self._run("ip", "-n", a.netns, "link", "set", "lo", "up")
        self._run("ip", "-n", a.netns, "addr", "add", f"{a.node_ip}/32", "dev", "lo")
        self._run("ip", "-n", a.netns, "addr", "add", f"{self.service_ip}/32", "dev", "lo")
        self._run("ip", "addr", "add", f"{a.node_ip}/32", "dev", "lo")  # the API server's way to the kubelet
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
            "ipMasq": False,  # nowhere to masquerade to: the namespace has no uplink
            "hairpinMode": True,
            "ipam": {
                "type": "host-local",
                "dataDir": str(self.state / "cni" / "ipam"),
                "ranges": [[{"subnet": POD_SUBNET, "gateway": POD_GATEWAY}]],
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
        self.processes.start("containerd", ["containerd", "--config", str(root / "config.toml")], None, self.in_netns)
        self._wait("containerd", 30, self.containerd_socket.exists)

    def _registry(self, log: Callable[[str], None]) -> None:
        """The registry in the namespace, and its address on the host's loopback for `podman push`."""
        registry = self.registry
        registry.prepare()
        registry.trust(self.state / "containerd" / "certs.d")  # read at each pull: containerd may run already
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
            f"    health 127.0.0.1:{18080 + self.apiserver_port - 16443}\n"
            f"    ready 127.0.0.1:{18181 + self.apiserver_port - 16443}\n"
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
        a, pki = self.addresses, self.cluster_state / "pki"
        issue_kubelet(pki, NODE_NAME, a.node_ip)
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
            "tlsCertFile": str(pki / "kubelet-serving.crt"),
            "tlsPrivateKeyFile": str(pki / "kubelet-serving.key"),
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
                    "client-certificate": str(pki / "kubelet-client.crt"),
                    "client-key": str(pki / "kubelet-client.key"),
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
            f"--hostname-override={NODE_NAME}",
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
            f"--hostname-override={NODE_NAME}",
            f"--health-port={20244 + self.apiserver_port - 16443}",
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
        status = self._kubectl("get", "node", NODE_NAME, "-o", "json", check=False)
        if not status:
            return False
        return is_ready(json.loads(status))

    def _wait_ready(self, started: float, log: Callable[[str], None]) -> None:
        self._wait(f"node {NODE_NAME}", 120, self._node_ready)
        log(f"real node {NODE_NAME} Ready in {time.monotonic() - started:.1f} s")

    def _wait(self, what: str, timeout: float, ready: Callable[[], bool]) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            for entry in self.processes.entries():
                if not self.processes.alive(entry):
                    tail = self.processes.log_tail(entry.name)
                    raise RealNodeError(f"{entry.name} exited while waiting for {what}; its log ends:\n{tail}")
            if time.monotonic() > deadline:
                raise RealNodeError(f"{what}: not ready after {timeout:.0f} s (logs in {self.processes.logs})")
            time.sleep(0.25)

    # ------------------------------------------------------------------ down
    def in_use(self) -> bool:
        """Whether an `up` left anything to stop: processes, or the namespace of a failed `up`."""
        return bool(self.processes.entries()) or self.netns_path.exists()

    def down(self) -> list[str]:
        """Stop the node's pods, then its processes; unmount, delete the namespaces and the host address."""
        running = {entry.name for entry in self.processes.running()}
        if "kubelet" in running:
            # cordoned first, so controllers cannot place the pods again; the kubelet then tears each one
            # down (containers, CNI DEL, the pod's network namespace, unmounts) while everything still runs
            self._kubectl("cordon", NODE_NAME, check=False)
            selector = f"--field-selector=spec.nodeName={NODE_NAME}"
            self._kubectl("delete", "pods", "-A", selector, "--grace-period=5", "--timeout=60s", check=False)
        if "containerd" in running:
            self._remove_leftover_containers()
        stopped: list[str] = []
        for group in STOP_ORDER:
            stopped += self.processes.stop(group)
        self._kill_shims()
        self._unmount()
        self._kubectl("delete", "node", NODE_NAME, "--ignore-not-found", check=False)
        for link in Path("/var/log/containers").glob("*.log"):
            if link.is_symlink() and str(os.readlink(link)).startswith(str(self.state)):
                link.unlink()
        if self.netns_path.exists():
            self._run("ip", "netns", "delete", self.addresses.netns, check=False)
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
