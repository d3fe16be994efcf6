"""A stock CoreDNS (the engine's build, with the usual ``cache 30``) serving a real API server's EndpointSlices.

The headless Service has no selector: the test writes its EndpointSlices itself, 100 endpoints each, as
the EndpointSlice controller does for a StatefulSet's pods (hostname ``<prefix>-<i>``, ready or not), so
that thousands of workers cost no pods. kompi's discovery then asks this CoreDNS as the master asks its
cluster's. CoreDNS binds port 53 on a loopback address of its own, so this needs root.

The API server refuses loopback endpoint addresses, so workers get addresses in 198.18.0.0/16, inside the
range RFC 2544 reserves for benchmarks; ``answering_addresses`` makes that range local for as long as a test
needs one listener on 0.0.0.0 to answer for every worker.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kompi_engine.cluster.processes import cpu_seconds
from tests.discovery.module import kd
from tests.e2e.live import Kubectl

WORKER_RANGE = "198.18.0.0/16"  # RFC 2544's benchmarking range: never a real cluster's
SLICE_SIZE = 100  # endpoints per EndpointSlice, the EndpointSlice controller's default maximum
CLUSTER_DOMAIN = "cluster.local"


@dataclass(frozen=True)
class Workers:
    """N workers of a headless Service ``service`` in ``namespace``, as EndpointSlices."""

    namespace: str
    service: str
    count: int
    port: int = 2222

    @property
    def prefix(self) -> str:
        return f"{self.service}-worker"

    @property
    def cluster(self) -> kd.cluster.Cluster:
        return kd.cluster.Cluster(f"{self.service}.{self.namespace}.svc.{CLUSTER_DOMAIN}", self.prefix, 1)

    def address(self, ordinal: int) -> str:
        """198.18.x.y, in WORKER_RANGE (the API server refuses loopback endpoint addresses)."""
        return f"198.18.{ordinal // 250}.{ordinal % 250 + 1}"

    def slice_name(self, ordinal: int) -> str:
        return f"{self.service}-{ordinal // SLICE_SIZE}"

    def manifests(self, ready: set[int] | None = None) -> list[dict[str, Any]]:
        """The namespace, the Service and the slices; every worker ready unless ``ready`` says which."""
        objects: list[dict[str, Any]] = [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": self.namespace}},
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": self.service, "namespace": self.namespace},
                "spec": {"clusterIP": "None", "ports": [{"name": "ssh", "port": self.port, "protocol": "TCP"}]},
            },
        ]
        for first in range(0, self.count, SLICE_SIZE):
            ordinals = range(first, min(first + SLICE_SIZE, self.count))
            objects.append(
                {
                    "apiVersion": "discovery.k8s.io/v1",
                    "kind": "EndpointSlice",
                    "metadata": {
                        "name": self.slice_name(first),
                        "namespace": self.namespace,
                        "labels": {"kubernetes.io/service-name": self.service},
                    },
                    "addressType": "IPv4",
                    "ports": [{"name": "ssh", "port": self.port, "protocol": "TCP"}],
                    "endpoints": [
                        {
                            "addresses": [self.address(o)],
                            "hostname": f"{self.prefix}-{o}",
                            "conditions": {"ready": ready is None or o in ready},
                        }
                        for o in ordinals
                    ],
                }
            )
        return objects

    def create(self, kubectl: Kubectl, ready: set[int] | None = None) -> None:
        kubectl.run(
            "apply",
            "-f",
            "-",
            input_text=json.dumps({"apiVersion": "v1", "kind": "List", "items": self.manifests(ready)}),
        )

    def set_ready(self, kubectl: Kubectl, ordinal: int, ready: bool) -> float:
        """Flip one endpoint's readiness, as the EndpointSlice controller does; returns when the API has it."""
        patch = [{"op": "replace", "path": f"/endpoints/{ordinal % SLICE_SIZE}/conditions/ready", "value": ready}]
        kubectl.run(
            "patch",
            "endpointslice",
            self.slice_name(ordinal),
            "-n",
            self.namespace,
            "--type=json",
            "-p",
            json.dumps(patch),
        )
        return time.monotonic()

    def delete(self, kubectl: Kubectl) -> None:
        kubectl.run("delete", "namespace", self.namespace, "--wait=false", check=False)


@contextmanager
def answering_addresses() -> Iterator[None]:
    """Make every address of WORKER_RANGE local (an AnyIP route), so that a listener on 0.0.0.0 answers them."""
    route = ["ip", "route", "add", "local", WORKER_RANGE, "dev", "lo", "table", "local"]
    subprocess.run(route, check=True, capture_output=True)
    try:
        yield
    finally:
        subprocess.run(["ip", "route", "del", *route[3:]], check=False, capture_output=True)


@dataclass(frozen=True)
class StockDns:
    address: str
    resolv_conf: Path
    process: subprocess.Popen[bytes]

    @property
    def servers(self) -> list[tuple[str, int]]:
        return [(self.address, 53)]

    def cpu_seconds(self) -> float:
        return cpu_seconds(self.process.pid)


@contextmanager
def stock_coredns(coredns: Path, kubeconfig: Path, address: str, scratch: Path) -> Iterator[StockDns]:
    """CoreDNS on ``address``:53 with ``cache 30`` and the kubernetes plugin, until the block ends."""
    if os.geteuid() != 0:
        raise RuntimeError("CoreDNS on port 53 needs root (as the real-node tests do)")
    scratch.mkdir(parents=True, exist_ok=True)
    corefile = scratch / "Corefile"
    corefile.write_text(
        ".:53 {\n"
        f"    bind {address}\n"
        "    errors\n"
        "    cache 30\n"
        f"    kubernetes {CLUSTER_DOMAIN} {{\n"
        f"        kubeconfig {kubeconfig}\n"
        "    }\n"
        "}\n"
    )
    resolv_conf = scratch / "resolv.conf"
    resolv_conf.write_text(f"nameserver {address}\n")
    log = (scratch / "coredns.log").open("wb")
    process = subprocess.Popen([str(coredns), "-conf", str(corefile)], stdout=log, stderr=subprocess.STDOUT)
    try:
        dns = StockDns(address, resolv_conf, process)
        deadline = time.monotonic() + 60
        while (
            kd.dns_client.look_up([f"kubernetes.default.svc.{CLUSTER_DOMAIN}"], dns.servers)[
                f"kubernetes.default.svc.{CLUSTER_DOMAIN}"
            ].exists
            is not True
        ):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"CoreDNS did not serve: {(scratch / 'coredns.log').read_text()[-2000:]}")
            time.sleep(0.2)
        yield dns
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def wait_until_served(dns: StockDns, workers: Workers, ready: set[int], timeout: float = 120) -> None:
    """Until CoreDNS answers every ready worker's own name (it has every slice): the setup, not the test."""
    names = {workers.cluster.fqdn(o) for o in ready}
    deadline = time.monotonic() + timeout
    while True:
        found = kd.dns_client.look_up(names, dns.servers)
        missing = {name for name, lookup in found.items() if lookup.exists is not True}
        if not missing:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"CoreDNS never served {len(missing)} of {len(names)} workers")
        names = missing
        time.sleep(1)
