"""`kompi local up|down|status`: a Kubernetes control plane on 127.0.0.1 with kwok's fake nodes, or with
real ones.

etcd, kube-apiserver, kube-controller-manager and kube-scheduler are the real ones; kwok plays the
nodes (cpu, memory, nvidia.com/gpu) and moves pods to Running/Ready without running containers. Real
nodes (kompi_engine.cluster.real_node: kubelet and containerd, one or several joined by kompi_engine.cluster.fabric's
link) run kompi's images.

`up` runs the cluster's steps in order (STEPS: certificates, etcd, the API server, ..., the nodes), recording
each one as it begins; `down` undoes those recorded, in reverse, as a real node does its own (steps.py).
"""

from __future__ import annotations

import base64
import json
import ssl
import time
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml

from kompi_components.kube.conditions import has_condition, is_ready
from kompi_engine import paths, versions
from kompi_engine.build.gang_scheduler import CONTROLLER_BINARY, SCHEDULER_BINARY
from kompi_engine.build.kueue import BINARY as KUEUE_BINARY
from kompi_engine.cluster import gang, kueue
from kompi_engine.cluster.fabric import DEFAULT_MTU, Fabric, check_mtu
from kompi_engine.cluster.kueue import Settings as KueueSettings  # (the class has a field named kueue)
from kompi_engine.cluster.kwok_one_shot import launcher_stage
from kompi_engine.cluster.kwok_start_delay import start_delay_stage
from kompi_engine.cluster.pki import issue_missing_clients, issue_serving, make_pki
from kompi_engine.cluster.ports import Ports
from kompi_engine.cluster.processes import ProcessTable, wait_until_ready
from kompi_engine.cluster.real_node import MAX_NODES, NodeAddresses, RealNode, RealNodeError, node_state
from kompi_engine.cluster.steps import Log, Record, Step, undo, undo_failed
from kompi_engine.kubectl import Kubectl

SERVICE_CIDR = "10.96.0.0/16"  # virtual only: nothing routes there (no kube-proxy)
SERVICE_IP = "10.96.0.1"
POD_CIDR = "10.244.0.0/16"  # the fake pod IPs kwok hands out
# kompi's own kwok settings and stages, beside the stages from kwok's module (kwok-stages.yaml in the engine's bin)
KOMPI_KWOK_CONFIGS = tuple(
    Path(__file__).with_name("kwok") / name
    for name in ("kwok-configuration.yaml", "pod-ready-again.yaml", "pod-stop-on-delete.yaml")
)
# Client rate limits of the controller-manager and the schedulers. The defaults (20 and 50 requests/s)
# guard a shared API server; on this one-user cluster they were the whole cost of a large `up`: a
# StatefulSet's 512 pods were created at 20/s, 25 s (bench/engine_up.py).
CLIENT_RATE = {"qps": 1000, "burst": 2000}
# Scheduler names kompi's gang modes set. The local scheduler answers to them so that such pods are
# placed, ONE BY ONE: a stand-in that makes the objects testable, not gang scheduling. The third name,
# scheduler-plugins-scheduler, is a real gang scheduler here (gang.py).
STAND_IN_SCHEDULERS = ("kube-batch", "volcano")
CONTROLLERS = ("kwok", "kube-scheduler", "kube-controller-manager")  # what the "controllers" step starts


class LocalClusterError(RuntimeError):
    """The local cluster cannot start, or is not in the state a command needs."""


@dataclass(frozen=True)
class FakeNodes:
    count: int = 4
    cpu: str = "64"
    memory: str = "1Ti"
    gpus: int = 8  # nvidia.com/gpu per node
    pods: int = 110
    # How long a fake pod takes to become Running and Ready (0: at once), as a container start would.
    pod_start_seconds: float = 0.0
    # The clusters (by name) whose one-shot run's launcher (the master Job's pod) runs for launcher_seconds before
    # it succeeds, so that a run in progress can be preempted (kwok_one_shot); any other completes at once, as
    # kwok completes every Job pod.
    long_runs: tuple[str, ...] = ()
    launcher_seconds: float = 3600.0

    prefix: str = "kwok-node"

    def names(self) -> list[str]:
        return [f"{self.prefix}-{index}" for index in range(self.count)]

    def manifests(self) -> list[dict[str, object]]:
        capacity = {"cpu": self.cpu, "memory": self.memory, "pods": str(self.pods), "ephemeral-storage": "1Ti"}
        capacity["nvidia.com/gpu"] = str(self.gpus)
        labels = {"type": "kwok", "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"}
        if self.gpus:
            labels["nvidia.com/gpu.present"] = "true"  # as GPU feature discovery labels GPU nodes
        return [
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": name,
                    "annotations": {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
                    "labels": labels | {"kubernetes.io/hostname": name},
                },
                "status": {
                    "capacity": capacity,
                    "allocatable": capacity,
                    "nodeInfo": {"kubeletVersion": f"v{versions.KUBERNETES}", "containerRuntimeVersion": "kwok"},
                },
            }
            for name in self.names()
        ]


@dataclass
class LocalCluster:
    state: Path = field(default_factory=paths.default_cluster_dir)
    bin: Path = field(default_factory=paths.bin_dir)
    ports: Ports = field(default_factory=Ports)
    nodes: FakeNodes = field(default_factory=FakeNodes)
    real_node: bool = False  # real nodes (kubelet, containerd) instead of kwok's fake ones
    node_images: tuple[str, ...] | None = None  # images for the real nodes (default: all but training images)
    real_nodes: int = 1  # how many, with real_node
    mtu: int = DEFAULT_MTU  # of the link between the real nodes
    kueue: bool = False  # run Kueue (kompi:queue), with a ClusterQueue for the nodes' capacity
    kueue_settings: KueueSettings = field(default_factory=KueueSettings)  # its platform choices

    def real_node_at(self, index: int) -> RealNode:
        return RealNode(self.state, self.bin, self.ports.apiserver, SERVICE_IP, index, self.real_nodes, self.mtu)

    @property
    def node(self) -> RealNode:
        """The first real node (the only one by default; it serves the image registry)."""
        return self.real_node_at(0)

    @property
    def real_node_list(self) -> list[RealNode]:
        return [self.real_node_at(index) for index in range(self.real_nodes)]

    @property
    def fabric(self) -> Fabric:
        return NodeAddresses.fabric_for(self.ports.apiserver, self.mtu)

    @property
    def kubeconfig(self) -> Path:
        return self.state / "kubeconfig"

    @property
    def processes(self) -> ProcessTable:
        return ProcessTable(self.state)

    def kubectl(self, *args: str, input_text: str | None = None, check: bool = True) -> str:
        kubectl = Kubectl(str(self.bin / "kubectl"), str(self.kubeconfig))
        return kubectl.stdout(*args, input_text=input_text, check=check, error=LocalClusterError)

    # ------------------------------------------------------------------ up
    def up(self, log: Callable[[str], None] = lambda _: None) -> Path:
        """Start every part and wait until nodes are Ready; returns the kubeconfig path."""
        running = self.processes.running()
        if running:
            raise LocalClusterError(
                f"a local cluster already runs from {self.state} ({', '.join(e.name for e in running)}); "
                f"use it (KUBECONFIG={self.kubeconfig}) or stop it: bin/kompi local down --dir {self.state}"
            )
        self._check_binaries()
        self._check_ports_free()
        if self.real_node:
            if not 1 <= self.real_nodes <= MAX_NODES:
                raise LocalClusterError(f"--nodes {self.real_nodes}: expected 1 to {MAX_NODES} real nodes")
            check_mtu(self.mtu)
            self.node.check_host()
        started = time.monotonic()
        self.state.mkdir(parents=True, exist_ok=True)
        self.processes.file.unlink(missing_ok=True)
        begun: list[str] = []
        self._record.write(begun)
        for step in self.steps():
            begun.append(step.name)
            self._record.write(begun)  # before it runs: a step that fails halfway is undone too
            try:
                step.up(self, log)
            except BaseException:
                log(f"start failed at {step.name}: undoing {', '.join(reversed(begun))}")
                try:
                    self.down()
                except LocalClusterError as undo_error:  # named, and the step's own error raised
                    log(str(undo_error))
                raise
        description = {"ports": asdict(self.ports), "realNode": self.real_node, "kueue": self.kueue}
        if self.real_node:
            description |= {"realNodes": self.real_nodes, "mtu": self.mtu}
        (self.state / "cluster.json").write_text(json.dumps(description, indent=1))
        log(f"local cluster up in {time.monotonic() - started:.1f} s")
        return self.kubeconfig

    @property
    def control_plane_binaries(self) -> tuple[str, ...]:
        """What the control plane and kwok's nodes run (a real node checks its own: RealNode.check_host)."""
        kubernetes = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl", "kwok")
        return (*kubernetes, SCHEDULER_BINARY, CONTROLLER_BINARY, *([KUEUE_BINARY] if self.kueue else []))

    def _check_binaries(self) -> None:
        missing = [name for name in self.control_plane_binaries if not (self.bin / name).exists()]
        if missing:
            raise LocalClusterError(f"missing {', '.join(missing)} in {self.bin}: run bin/kompi engine build")

    def _check_ports_free(self) -> None:
        import socket

        for name, port in self.ports.on_host(self.real_node).items():
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    raise LocalClusterError(f"port 127.0.0.1:{port} ({name}) is in use by another program")

    def _write_kubeconfig(self, path: Path, identity: str) -> None:
        pki = self.state / "pki"
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "kompi-local",
                    "cluster": {
                        "server": f"https://127.0.0.1:{self.ports.apiserver}",
                        "certificate-authority": str(pki / "ca.crt"),
                    },
                }
            ],
            "users": [
                {
                    "name": identity,
                    "user": {
                        "client-certificate": str(pki / f"{identity}.crt"),
                        "client-key": str(pki / f"{identity}.key"),
                    },
                }
            ],
            "contexts": [{"name": "kompi-local", "context": {"cluster": "kompi-local", "user": identity}}],
            "current-context": "kompi-local",
        }
        path.write_text(yaml.safe_dump(config, sort_keys=False))
        path.chmod(0o600)

    # ------------------------------------------------------------------ the steps of `up` (STEPS)
    def steps(self) -> list[Step[LocalCluster]]:
        """This cluster's steps, in order: Kueue's only with Kueue, the link only with real nodes."""
        skipped = set() if self.kueue else {"kueue", "kueue quota"}
        skipped |= set() if self.real_node else {"fabric"}
        return [step for step in STEPS if step.name not in skipped]

    @property
    def _record(self) -> Record:
        """The steps the last `up` began, in order, in the cluster's state (steps.json)."""
        return Record(self.state / "steps.json")

    def steps_begun(self) -> list[str]:
        """The recorded steps; every step when nothing is recorded (a cluster an older kompi started), so that
        `down` still stops all it may have started (each undo does nothing where nothing is)."""
        recorded = self._record.read()
        return [step.name for step in STEPS] if recorded is None else recorded

    def _certificates(self, log: Log) -> None:
        pki = self.state / "pki"
        if not (pki / "sa.key").exists():
            make_pki(pki, SERVICE_IP)
        issue_missing_clients(pki)  # a cluster directory from before the gang scheduler lacks its users
        self._write_kubeconfig(self.kubeconfig, "admin")
        node_users = ("coredns", "kube-router")  # the real node's
        clients = ("controller-manager", "scheduler", "kwok", *node_users, *gang.PROCESS_NAMES, "kueue")
        for identity in clients:
            self._write_kubeconfig(self.state / f"{identity}.kubeconfig", identity)

    def _start_etcd(self, log: Log) -> None:
        etcd_data = self.state / "etcd"
        etcd_data.mkdir(mode=0o700, exist_ok=True)
        p = self.ports
        self.processes.start(
            "etcd",
            [
                str(self.bin / "etcd"),
                "--name=local",
                f"--data-dir={etcd_data}",
                f"--listen-client-urls=http://127.0.0.1:{p.etcd}",
                f"--advertise-client-urls=http://127.0.0.1:{p.etcd}",
                f"--listen-peer-urls=http://127.0.0.1:{p.etcd_peer}",
                f"--initial-advertise-peer-urls=http://127.0.0.1:{p.etcd_peer}",
                f"--initial-cluster=local=http://127.0.0.1:{p.etcd_peer}",
                "--unsafe-no-fsync",  # a throw-away test store: durability costs seconds per `up`
                "--log-level=warn",
            ],
        )
        self._wait("etcd", 30, lambda: _http_ok(f"http://127.0.0.1:{p.etcd}/health"), log)

    def _start_controllers(self, log: Log) -> None:
        p = self.ports
        self.processes.start("kube-controller-manager", self._controller_manager_command())
        self.processes.start("kube-scheduler", self._scheduler_command())
        if not self.real_node:
            self.processes.start("kwok", self._kwok_command())
        insecure = ssl._create_unverified_context()  # their self-signed serving certs; health only
        self._wait(
            "kube-controller-manager",
            60,
            lambda: _http_ok(f"https://127.0.0.1:{p.controller_manager}/healthz", insecure),
            log,
        )
        self._wait("kube-scheduler", 60, lambda: _http_ok(f"https://127.0.0.1:{p.scheduler}/healthz", insecure), log)

    def _apply_crds(self, log: Log) -> None:
        self.kubectl("apply", "-f", str(self.bin / "kwok-storage-class.yaml"))
        for crd in sorted(self.bin.glob("crd-*.yaml")):
            self.kubectl("apply", "--server-side", "-f", str(crd))

    def _start_fabric(self, log: Log) -> None:
        """The link that joins the real nodes, before the first of them (one left by a crash is used)."""
        if not self.fabric.exists():
            self.fabric.up()

    def _start_nodes(self, log: Log) -> None:
        self._forget_other_nodes(log)
        if self.real_node:
            for node in self.real_node_list:  # node 0 first: it serves the registry the others trust
                node.up(log, self.node_images)
        elif self.nodes.count:
            self.kubectl("apply", "-f", "-", input_text=yaml.safe_dump_all(self.nodes.manifests()))
            self._wait(f"{self.nodes.count} kwok nodes", 90, self._nodes_ready, log)

    def _stop_nodes(self, graceful: bool) -> None:
        """Every real node an `up` of this state directory started, last first; each one even when another's
        `down` failed."""
        failures: list[str] = []
        for node in self._started_nodes():
            try:
                node.down()
            except RealNodeError as error:
                failures.append(str(error))
        if failures:
            raise LocalClusterError("; ".join(failures))

    def _wait_for_default_account(self, log: Log) -> None:
        self._wait("default ServiceAccount", 60, self._default_account_exists, log)

    def start_apiserver(self, log: Callable[[str], None] = lambda _: None) -> None:
        """Start the API server (also after `stop_apiserver`, as the fault tests do) and wait until ready."""
        self.processes.start("kube-apiserver", self._apiserver_command())
        ca = ssl.create_default_context(cafile=str(self.state / "pki" / "ca.crt"))
        url = f"https://127.0.0.1:{self.ports.apiserver}/readyz"
        self._wait("kube-apiserver", 120, lambda: _http_ok(url, ca), log)

    def stop_apiserver(self) -> None:
        self.processes.stop(["kube-apiserver"])

    def _apiserver_command(self) -> list[str]:
        pki, p = self.state / "pki", self.ports
        return [
            str(self.bin / "kube-apiserver"),
            f"--etcd-servers=http://127.0.0.1:{p.etcd}",
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            f"--secure-port={p.apiserver}",
            "--endpoint-reconciler-type=none",  # no kube-proxy and no routable service IP here
            f"--tls-cert-file={pki / 'apiserver.crt'}",
            f"--tls-private-key-file={pki / 'apiserver.key'}",
            f"--client-ca-file={pki / 'ca.crt'}",
            f"--kubelet-client-certificate={pki / 'apiserver-kubelet-client.crt'}",
            f"--kubelet-client-key={pki / 'apiserver-kubelet-client.key'}",
            "--kubelet-preferred-address-types=InternalIP",  # the real node's name is in no DNS
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-account-key-file={pki / 'sa.pub'}",
            f"--service-account-signing-key-file={pki / 'sa.key'}",
            f"--service-cluster-ip-range={SERVICE_CIDR}",
            "--authorization-mode=Node,RBAC",
            f"--requestheader-client-ca-file={pki / 'front-proxy-ca.crt'}",
            "--requestheader-allowed-names=front-proxy-client",
            "--requestheader-username-headers=X-Remote-User",
            "--requestheader-group-headers=X-Remote-Group",
            "--requestheader-extra-headers-prefix=X-Remote-Extra-",
            f"--proxy-client-cert-file={pki / 'front-proxy-client.crt'}",
            f"--proxy-client-key-file={pki / 'front-proxy-client.key'}",
            "--enable-admission-plugins=NodeRestriction",
            "--profiling=false",
            f"--cert-dir={self.state / 'certs' / 'apiserver'}",
        ]

    def _controller_manager_command(self) -> list[str]:
        pki, kubeconfig = self.state / "pki", self.state / "controller-manager.kubeconfig"
        return [
            str(self.bin / "kube-controller-manager"),
            f"--kubeconfig={kubeconfig}",
            f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}",
            "--use-service-account-credentials=true",
            "--bind-address=127.0.0.1",
            f"--secure-port={self.ports.controller_manager}",
            f"--cert-dir={self.state / 'certs' / 'controller-manager'}",
            "--leader-elect=false",
            f"--root-ca-file={pki / 'ca.crt'}",
            f"--service-account-private-key-file={pki / 'sa.key'}",
            f"--cluster-signing-cert-file={pki / 'ca.crt'}",
            f"--cluster-signing-key-file={pki / 'ca.key'}",
            "--profiling=false",
            f"--kube-api-qps={CLIENT_RATE['qps']}",
            f"--kube-api-burst={CLIENT_RATE['burst']}",
        ]

    def _scheduler_command(self) -> list[str]:
        kubeconfig = self.state / "scheduler.kubeconfig"
        config = {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "clientConnection": {"kubeconfig": str(kubeconfig)} | CLIENT_RATE,
            "leaderElection": {"leaderElect": False},
            "profiles": [{"schedulerName": name} for name in ("default-scheduler", *STAND_IN_SCHEDULERS)],
        }
        config_file = self.state / "scheduler-config.yaml"
        config_file.write_text(yaml.safe_dump(config))
        return [
            str(self.bin / "kube-scheduler"),
            f"--config={config_file}",
            f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}",
            "--bind-address=127.0.0.1",
            f"--secure-port={self.ports.scheduler}",
            f"--cert-dir={self.state / 'certs' / 'scheduler'}",
            "--profiling=false",
        ]

    def _start_gang_scheduler(self, log: Log) -> None:
        """Coscheduling and its PodGroup controller, once their CRDs serve and their users may act."""
        # (not `kubectl wait --for=condition=Established`: it fails at once on a CRD whose status has no
        # conditions yet, "status.conditions accessor error: <nil>", as a cold CI run met)
        self._wait("the gang scheduler's CRDs", 60, lambda: self._crds_established(gang.CRD_NAMES), log)
        self.kubectl("apply", "-f", "-", input_text=yaml.safe_dump_all(gang.rbac_manifests()))
        config_file = self.state / "scheduler-plugins-config.yaml"
        kubeconfig = self.state / "scheduler-plugins.kubeconfig"
        config_file.write_text(yaml.safe_dump(gang.scheduler_config(kubeconfig, CLIENT_RATE)))
        port = self.ports.gang_scheduler
        self.processes.start("scheduler-plugins", gang.scheduler_command(self.bin, self.state, port, config_file))
        self.processes.start("scheduler-plugins-controller", gang.controller_command(self.bin, self.state))
        insecure = ssl._create_unverified_context()  # its self-signed serving cert; health only
        self._wait("scheduler-plugins", 60, lambda: _http_ok(f"https://127.0.0.1:{port}/healthz", insecure), log)

    def _start_kueue(self, log: Log) -> None:
        """Kueue's CRDs, its manager and its webhooks: before any node, so that no pod is made without them."""
        for crd in kueue.crd_files(self.bin):
            self.kubectl("apply", "--server-side", "-f", str(crd))
        self._wait("Kueue's CRDs", 60, lambda: self._crds_established(kueue.crd_names(self.bin)), log)
        self.kubectl("apply", "-f", "-", input_text=yaml.safe_dump_all(kueue.setup_manifests()))
        pki, certs = self.state / "pki", self.state / "kueue" / "webhook"
        certs.mkdir(parents=True, exist_ok=True)
        issue_serving(pki, certs, "kompi-kueue-webhook", "127.0.0.1", "tls")
        kubeconfig, config_file = self.state / "kueue.kubeconfig", self.state / "kueue-config.yaml"
        p = self.ports
        config = kueue.manager_config(self.state, p.kueue_webhook, p.kueue_health, self.kueue_settings)
        config_file.write_text(yaml.safe_dump(config))
        command = kueue.manager_command(self.bin, config_file, kubeconfig)
        self.processes.start(kueue.PROCESS_NAME, command, launcher=kueue.own_etc_launcher(self.state))
        self._wait("kueue", 90, lambda: _http_ok(f"http://127.0.0.1:{p.kueue_health}/readyz"), log)
        ca_bundle = base64.b64encode((pki / "ca.crt").read_bytes()).decode()
        hooks = kueue.webhook_configurations(p.kueue_webhook, ca_bundle)
        self.kubectl("apply", "-f", "-", input_text=yaml.safe_dump_all(hooks))

    def _apply_kueue_quota(self, log: Log) -> None:
        """A ClusterQueue holding what the nodes, fake or real, can give (the ClusterQueue's own webhooks answer
        it: applying it proves the API server reaches them)."""
        nodes = json.loads(self.kubectl("get", "nodes", "-o", "json"))["items"]
        quota = kueue.quota_manifests(kueue.allocatable(nodes))
        self.kubectl("apply", "-f", "-", input_text=yaml.safe_dump_all(quota))

    def _kwok_command(self) -> list[str]:
        configs = [self.bin / "kwok-stages.yaml", *KOMPI_KWOK_CONFIGS]
        if self.nodes.pod_start_seconds:
            delay = self.state / "kwok-pod-start-delay.yaml"
            delay.write_text(yaml.safe_dump(start_delay_stage(self.nodes.pod_start_seconds)))
            configs.append(delay)
        if self.nodes.long_runs:
            launcher = self.state / "kwok-one-shot-launcher.yaml"
            launcher.write_text(yaml.safe_dump(launcher_stage(self.nodes.launcher_seconds, self.nodes.long_runs)))
            configs.append(launcher)
        return [
            str(self.bin / "kwok"),
            f"--kubeconfig={self.state / 'kwok.kubeconfig'}",
            *(f"--config={path}" for path in configs),
            "--manage-all-nodes=false",
            "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
            "--manage-nodes-with-label-selector=",
            "--manage-single-node=",
            f"--cidr={POD_CIDR}",
            "--node-ip=10.0.0.1",
            "--node-lease-duration-seconds=40",
        ]

    def _node_names(self) -> set[str]:
        """The Node objects this start brings up."""
        return {node.name for node in self.real_node_list} if self.real_node else set(self.nodes.names())

    def _forget_other_nodes(self, log: Callable[[str], None]) -> None:
        """Delete the Node objects of an earlier start (the kwok nodes before a real node, or the other way
        round): never Ready again, the scheduler would still bind pods to them, which then never start
        and never finish terminating. Their pods go with them (the pod garbage collector)."""
        listed = set(self.kubectl("get", "nodes", "-o", "name").split())
        stale = sorted(listed - {f"node/{name}" for name in self._node_names()})
        if stale:
            self.kubectl("delete", "--wait=false", *stale)
            log(f"deleted the nodes of an earlier start: {', '.join(name.removeprefix('node/') for name in stale)}")

    def _nodes_ready(self) -> bool:
        nodes = json.loads(self.kubectl("get", "nodes", "-l", "type=kwok", "-o", "json"))["items"]
        ready = [node for node in nodes if is_ready(node) and not node["spec"].get("taints")]
        return len(ready) == self.nodes.count

    def _default_account_exists(self) -> bool:
        return bool(self.kubectl("get", "serviceaccount", "default", "-n", "default", "-o", "name", check=False))

    def _crds_established(self, names: Sequence[str]) -> bool:
        listed = self.kubectl("get", "crd", *names, "-o", "json", check=False)
        if not listed:
            return False
        document = json.loads(listed)
        crds = document.get("items", [document])
        return len(crds) == len(names) and all(has_condition(crd, "Established") for crd in crds)

    def _wait(self, what: str, timeout: float, ready: Callable[[], bool], log: Callable[[str], None]) -> None:
        seconds = wait_until_ready(what, timeout, ready, self.processes, LocalClusterError)
        log(f"{what} ready after {seconds:.1f} s")

    # ------------------------------------------------------------------ down / status
    def _started_nodes(self) -> list[RealNode]:
        """The real nodes an `up` of this state directory made (however many it was asked for), last first:
        node 0 serves the registry the others pull from."""
        indexes = [index for index in range(MAX_NODES) if node_state(self.state, index).is_dir()]
        count = max([self.real_nodes, *(index + 1 for index in indexes)])
        nodes = [RealNode(self.state, self.bin, self.ports.apiserver, SERVICE_IP, i, count, self.mtu) for i in indexes]
        return [node for node in reversed(nodes) if node.in_use()]

    def running_nodes(self) -> list[RealNode]:
        """The real nodes of this state directory whose processes run now, node 0 first."""
        return [node for node in reversed(self._started_nodes()) if node.processes.running()]

    def down(self) -> list[str]:
        """Undo the steps `up` began, in reverse (the nodes, the link, the API server's clients, the API server,
        its store): stop exactly the processes `up` started; returns their names. A step whose undo fails
        stops no other: all of them run, then LocalClusterError names each failure (the record stays, for a
        second `down`)."""
        before = self._running_names()
        failures = undo(self, STEPS, self.steps_begun())
        if failures:
            raise LocalClusterError(undo_failed(f"local cluster {self.state}", failures))
        self._record.forget()
        after = set(self._running_names())
        return [name for name in before if name not in after]

    def _running_names(self) -> list[str]:
        """The names `down` reports, in the order it stops them: the nodes' (last node first), then the
        cluster's own processes, last started first."""
        names: list[str] = []
        for node in self._started_nodes():
            prefix = f"{node.name}/" if node.addresses.index else ""
            names += sorted(prefix + entry.name for entry in node.processes.running())
        return names + [entry.name for entry in reversed(self.processes.running())]

    def status(self) -> dict[str, bool]:
        status = {entry.name: self.processes.alive(entry) for entry in self.processes.entries()}
        for node in reversed(self._started_nodes()):
            prefix = f"{node.name}/" if node.addresses.index else ""
            status |= {prefix + entry.name: node.processes.alive(entry) for entry in node.processes.entries()}
        return status


def _http_ok(url: str, context: ssl.SSLContext | None = None) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2, context=context) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def _stop(*names: str) -> Callable[[LocalCluster, bool], None]:
    """The undo of a step that started ``names``: stop them (and only them)."""

    def stop(cluster: LocalCluster, graceful: bool) -> None:
        cluster.processes.stop(names)

    return stop


def _remove_fabric(cluster: LocalCluster, graceful: bool) -> None:
    cluster.fabric.down()


# The cluster's steps, in order; `down` undoes those begun in reverse: the nodes, then the API server's clients,
# then the API server, then its store.
STEPS: tuple[Step[LocalCluster], ...] = (
    Step("certificates", LocalCluster._certificates),
    Step("etcd", LocalCluster._start_etcd, _stop("etcd")),
    Step("kube-apiserver", LocalCluster.start_apiserver, _stop("kube-apiserver")),
    Step("controllers", LocalCluster._start_controllers, _stop(*CONTROLLERS)),
    Step("crds", LocalCluster._apply_crds),
    Step("gang scheduler", LocalCluster._start_gang_scheduler, _stop(*gang.PROCESS_NAMES)),
    Step("kueue", LocalCluster._start_kueue, _stop(kueue.PROCESS_NAME)),
    Step("fabric", LocalCluster._start_fabric, _remove_fabric),
    Step("nodes", LocalCluster._start_nodes, LocalCluster._stop_nodes),
    Step("kueue quota", LocalCluster._apply_kueue_quota),
    Step("default account", LocalCluster._wait_for_default_account),
)
