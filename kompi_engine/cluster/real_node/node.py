"""RealNode: one real node of the local cluster, what its steps share (addresses, state, processes, the tools
they run), and the runner of the steps: `up` runs them in order and records each one begun; `down` undoes
those in reverse, every one even when another's undo fails (cluster/steps.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import yaml

from kompi_engine.build.node_binaries import COREDNS, KUBE_ROUTER, KUBELET, PAUSE, REGISTRY
from kompi_engine.cluster.fabric import DEFAULT_MTU
from kompi_engine.cluster.node_registry import NodeRegistry
from kompi_engine.cluster.ports import Ports
from kompi_engine.cluster.processes import ProcessTable, wait_until_ready
from kompi_engine.cluster.real_node.addresses import NodeAddresses, node_state
from kompi_engine.cluster.real_node.containerd import CNI_PLUGINS, CONTAINERD
from kompi_engine.cluster.real_node.coredns import COREDNS_STEP
from kompi_engine.cluster.real_node.errors import RealNodeError
from kompi_engine.cluster.real_node.images import IMAGES, from_podman, load_images
from kompi_engine.cluster.real_node.kubelet import KUBELET_STEP, NODE_READY
from kompi_engine.cluster.real_node.network import NETWORK
from kompi_engine.cluster.real_node.policy import NETWORK_POLICY
from kompi_engine.cluster.real_node.proxies import PROXIES
from kompi_engine.cluster.real_node.registry import REGISTRY_STEP
from kompi_engine.cluster.real_node.step import Log, Step
from kompi_engine.cluster.steps import Record, undo, undo_failed
from kompi_engine.kubectl import Kubectl

STEPS: tuple[Step[RealNode], ...] = (
    NETWORK,
    PROXIES,
    CONTAINERD,
    REGISTRY_STEP,
    IMAGES,
    COREDNS_STEP,
    KUBELET_STEP,
    NODE_READY,
    NETWORK_POLICY,
)
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
UNIX_SOCKET_PATH_MAX = 104  # what containerd accepts (sun_path's portable size)
STOP_GRACE = 10.0  # seconds a process has to exit after SIGTERM when the node goes down in order


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
        self.images_to_load: dict[str, str] = {}  # the images step's: name -> podman image id
        self.up_started = time.monotonic()

    @property
    def name(self) -> str:
        return self.addresses.name

    @property
    def serves_registry(self) -> bool:
        return self.addresses.index == 0

    # ------------------------------------------------------------------ what the steps share
    @property
    def netns_path(self) -> Path:
        return Path("/run/netns") / self.addresses.netns

    @property
    def in_netns(self) -> list[str]:
        return ["nsenter", f"--net={self.netns_path}"]

    @property
    def containerd_socket(self) -> Path:
        return self.state / "containerd" / "containerd.sock"

    def kubectl(self, *args: str, check: bool = True, input_text: str | None = None) -> str:
        kubectl = Kubectl(str(self.bin / "kubectl"), str(self.cluster_state / "kubeconfig"))
        return kubectl.stdout(*args, input_text=input_text, check=check, error=RealNodeError)

    def apply(self, manifests: list[dict[str, Any]]) -> None:
        self.kubectl("apply", "-f", "-", input_text=yaml.safe_dump_all(manifests))

    def ctr(self, *args: str) -> str:
        command = ["ctr", "--address", str(self.containerd_socket), "--namespace", "k8s.io", *args]
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise RealNodeError(f"ctr {' '.join(args[:2])}: {result.stderr.strip()}")
        return result.stdout

    @staticmethod
    def run(*command: str, check: bool = True) -> None:
        result = subprocess.run(list(command), capture_output=True, text=True, check=False)
        if check and result.returncode != 0:
            raise RealNodeError(f"{' '.join(command)}: {result.stderr.strip()}")

    def wait(self, what: str, timeout: float, ready: Callable[[], bool]) -> None:
        wait_until_ready(what, timeout, ready, self.processes, RealNodeError)

    @staticmethod
    def grace(graceful: bool) -> float:
        """Seconds a stopped process has to exit: none when the node loses power."""
        return STOP_GRACE if graceful else 0.0

    # ------------------------------------------------------------------ up
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

    def up(self, log: Log, image_names: Sequence[str] | None = None) -> None:
        """Start the node with ``image_names`` loaded (default: every localhost/kompi image podman has but the
        training images, 6 GB each: `up --local` of a stack that names one loads it). A failed step is named,
        and what began is undone."""
        self.check_host()
        self.images_to_load = from_podman(image_names)
        if self.netns_path.exists():
            raise RealNodeError(f"network namespace {self.addresses.netns} exists: bin/kompi local down first")
        if not self.fabric.exists():  # the cluster's step before its nodes makes it (LocalCluster)
            raise RealNodeError(
                f"the link between the nodes (network namespace {self.fabric.netns}) is missing: a node starts"
                " with its cluster (bin/kompi local up --node real)"
            )
        self.up_started = time.monotonic()
        for directory in ("containerd", "kubelet", "cni/net.d", "pki", "images", "pod-logs"):
            (self.state / directory).mkdir(parents=True, exist_ok=True)
        self.processes.file.unlink(missing_ok=True)
        begun: list[str] = []
        self._record(begun)
        for step in STEPS:
            begun.append(step.name)
            self._record(begun)  # before it runs: a step that fails halfway is undone too
            try:
                step.up(self, log)
            except BaseException as error:
                log(f"real node {self.name}: {step.name} failed; undoing {', '.join(reversed(begun))}")
                try:
                    self.down()
                except RealNodeError as undo_error:  # named, and the step's own error raised
                    log(str(undo_error))
                if isinstance(error, Exception):
                    raise RealNodeError(f"real node {self.name}, step {step.name}: {error}") from error
                raise

    @property
    def steps_file(self) -> Path:
        """The steps the last `up` began, in order (network, proxies, ... network policy)."""
        return self.state / "steps.json"

    def steps_begun(self) -> list[str]:
        """The recorded steps; every step when nothing is recorded but something runs (a node started by an
        older kompi), so that `down` still stops it all."""
        recorded = Record(self.steps_file).read()
        if recorded is not None:
            return recorded
        return [step.name for step in STEPS] if self.in_use() else []

    def _record(self, names: list[str]) -> None:
        Record(self.steps_file).write(names)

    def load(self, image_names: Sequence[str], log: Log) -> None:
        """Load ``image_names`` from podman's store into this running node; those it has are not loaded again."""
        load_images(self, from_podman(image_names), log)

    # ------------------------------------------------------------------ down
    def in_use(self) -> bool:
        """Whether an `up` left anything to stop: processes, or the namespace of a failed `up`."""
        return bool(self.processes.entries()) or self.netns_path.exists()

    def down(self) -> list[str]:
        """Undo the steps begun, in reverse (the kubelet's drains its pods first), then delete the Node object;
        returns the processes stopped. A step whose undo fails stops no other: all of them run, then an error
        names each failure (and the record stays, for a second `down`)."""
        stopped = self._undo(graceful=True)
        self.kubectl("delete", "node", self.name, "--ignore-not-found", check=False)
        Record(self.steps_file).forget()
        return stopped

    def power_off(self) -> list[str]:
        """The node as a machine that lost power: every container and process killed at once, its link gone;
        the Node object and its pods stay, for Kubernetes to find the node lost. `up` starts it again (its
        images and containerd's store kept), and the kubelet then starts the pods still bound to it."""
        stopped = self._undo(graceful=False)
        self._record([])
        return stopped

    def _undo(self, graceful: bool) -> list[str]:
        """Undo every step begun; raises RealNodeError naming each failed undo once all of them ran."""
        running = {entry.name for entry in self.processes.running()}
        failures = undo(self, STEPS, self.steps_begun(), graceful)
        if failures:
            raise RealNodeError(undo_failed(f"real node {self.name}", failures))
        return sorted(running - {entry.name for entry in self.processes.running()})
