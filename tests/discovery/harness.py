"""kompi's rendered master and workers as podman containers, with a real DNS server for discovery.

The pods' /etc/resolv.conf points at ``ClusterDns`` (on the network's gateway; the network has
podman's own DNS turned off), and each pod's /etc/hosts has only its own name, as kubelet writes it:
every other name comes from DNS, which lists only the pods the test has marked ready.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.discovery.dns_server import ClusterDns
from tests.images.cluster import Pod, RenderedCluster
from tests.images.pod_like import PodPlacement, run_pod_like, wait_ready
from tests.images.podman import Network, podman, remove_network, unique

FIRST_HOST = 10


@contextmanager
def network_without_podman_dns() -> Iterator[tuple[Network, str]]:
    name = unique("kompi-dns")
    podman("network", "create", "--disable-dns", name)
    try:
        info = json.loads(podman("network", "inspect", name).stdout)[0]["subnets"][0]
        yield Network(name, info["subnet"]), info["gateway"]
    finally:
        remove_network(name)


@dataclass
class DnsCluster:
    rendered: RenderedCluster
    network: Network
    gateway: str
    dns: ClusterDns
    scratch: Path
    mounts: list[str]
    containers: dict[str, str] = field(default_factory=dict)
    bridge_pinned: bool = False

    def address(self, pod: Pod) -> str:
        names = [self.rendered.master.name, *(worker.name for worker in self.rendered.workers)]
        return self.network.address(FIRST_HOST + names.index(pod.name))

    def start(self, pod: Pod, spec: dict[str, Any] | None = None, extra: list[str] | None = None) -> str:
        spec = spec or pod.spec
        container = spec["containers"][0]
        place = PodPlacement(
            unique(f"kompi-{pod.name}"), pod.name, self.network, self.address(pod), {pod.fqdn: self.address(pod)}
        )
        name = run_pod_like(
            spec,
            container,
            self.rendered.secrets,
            place,
            self.scratch / place.container_name,
            [*self.mounts, *(extra or [])],
        )
        self.containers[pod.name] = name
        self._pin_bridge_address()
        return name

    def _pin_bridge_address(self) -> None:
        """Give the network's bridge a fixed MAC address once it exists.

        A Linux bridge otherwise takes the lowest MAC of its ports: removing that container changes the
        gateway's MAC, and every pod's ARP entry for the gateway (where the test's DNS server listens)
        goes stale for seconds. Kubernetes has no such bridge between pods and cluster DNS.
        """
        if self.bridge_pinned:
            return
        bridge = json.loads(podman("network", "inspect", self.network.name).stdout)[0]["network_interface"]
        address = Path(f"/sys/class/net/{bridge}/address").read_text().strip()
        subprocess.run(["ip", "link", "set", "dev", bridge, "address", address], check=True)
        self.bridge_pinned = True

    def start_ready(self, pod: Pod) -> float:
        """Start a pod; once its readiness probe passes, publish it in DNS. Returns the publish time."""
        name = self.start(pod)
        wait_ready(name, pod.container)
        return self.dns.publish(pod.fqdn, self.address(pod))

    def kill(self, pod: Pod) -> float:
        """Remove the pod's container and its DNS records (endpoint gone); returns the withdraw time."""
        podman("rm", "-f", "-t", "0", self.containers.pop(pod.name))
        return self.dns.withdraw(pod.fqdn)

    def master_hostfile(self) -> Path:
        """The master's hostfile on the host side of its emptyDir."""
        return self.scratch / self.containers[self.rendered.master.name] / "kompi-generated" / "hostfile"


@contextmanager
def dns_cluster(rendered: RenderedCluster, scratch: Path, mounts: list[str] | None = None) -> Iterator[DnsCluster]:
    with network_without_podman_dns() as (net, gateway):
        resolv = scratch / "resolv.conf"
        scratch.mkdir(parents=True, exist_ok=True)
        resolv.write_text(f"nameserver {gateway}\noptions timeout:1 attempts:2\n")
        resolv.chmod(0o644)
        server = ClusterDns(gateway, rendered.names.service_domain)
        try:
            resolv_mount = f"type=bind,source={resolv},destination=/etc/resolv.conf,ro=true"
            yield DnsCluster(rendered, net, gateway, server, scratch, [resolv_mount, *(mounts or [])])
        finally:
            server.close()


def wait_for_file(path: Path, expected: str, timeout: float, poll: float = 0.01) -> float:
    """The time at which ``path`` first holds ``expected``; fails after ``timeout``."""
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        try:
            last = path.read_text()
        except FileNotFoundError:
            last = None
        if last == expected:
            return time.time()
        time.sleep(poll)
    raise AssertionError(f"{path} never became {expected!r} in {timeout}s (last: {last!r})")


@dataclass
class FakeKubeApi:
    """Records PATCHes of statefulsets/<name>/scale; refuses a wrong token."""

    address: str
    token: str
    calls: list[dict[str, Any]] = field(default_factory=list)

    @contextmanager
    def serving(self) -> Iterator[str]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_PATCH(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                authorized = self.headers.get("Authorization") == f"Bearer {api.token}"
                api.calls.append(
                    {
                        "path": self.path,
                        "body": body,
                        "authorized": authorized,
                        "contentType": self.headers.get("Content-Type"),
                        "time": time.time(),
                    }
                )
                status = 200 if authorized else 401
                reply = json.dumps({"kind": "Scale", "spec": body.get("spec", {})}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: object) -> None:
                pass

        server = ThreadingHTTPServer((self.address, 0), Handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://{self.address}:{server.server_address[1]}"
        finally:
            server.shutdown()
            server.server_close()
