"""The hostfile at 1,500 and 4,096 workers, from a stock CoreDNS (``cache 30``) over the local API server.

One SRV answer from CoreDNS holds about 1,100 workers; before kompi looked the rest up by name, the
hostfile listed 1,203 of 1,500 workers and 1,193 of 4,096, and `kompi-discover once` exited 0.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kompi_engine.local_cluster import LocalCluster
from kompi_engine.node_binaries import COREDNS
from tests.discovery.banner import sshd_banner
from tests.discovery.module import SCRIPT, kd
from tests.discovery.stock_dns import StockDns, Workers, answering_addresses, stock_coredns, wait_until_served
from tests.e2e.live import Kubectl

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def coredns(cluster: LocalCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[StockDns]:
    with stock_coredns(cluster.bin / COREDNS, cluster.kubeconfig, "127.0.53.1", tmp_path_factory.mktemp("dns")) as dns:
        yield dns


def discover_once(dns: StockDns, workers: Workers) -> subprocess.CompletedProcess[str]:
    """`kompi-discover once` as the master runs it, its resolv.conf naming the stock CoreDNS."""
    env = {
        **os.environ,
        "KOMPI_SERVICE_DOMAIN": workers.cluster.service_domain,
        "KOMPI_WORKER_PREFIX": workers.prefix,
        "KOMPI_RESOLV_CONF": str(dns.resolv_conf),
    }
    return subprocess.run(
        [sys.executable, str(SCRIPT), "once"], env=env, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.parametrize("count", [1500, 4096])
def test_the_hostfile_lists_every_ready_worker(coredns: StockDns, kubectl: Kubectl, count: int) -> None:
    workers = Workers(f"scale-{count}", "big", count)
    not_ready = {7, count // 2, count - 1}
    ready = set(range(count)) - not_ready
    workers.create(kubectl, ready)
    try:
        wait_until_served(coredns, workers, ready)
        srv = kd.query_srv(workers.cluster.srv_name, coredns.servers)
        assert not srv.complete, f"one answer held all {len(srv.records)} workers: the test would miss the cut"
        result = discover_once(coredns, workers)
        assert result.returncode == 0, result.stderr
        lines = result.stdout.splitlines()
        assert lines == [f"{workers.cluster.fqdn(o)} slots=1" for o in sorted(ready)], (
            f"{len(lines)} of {len(ready)} ready workers listed"
        )
    finally:
        workers.delete(kubectl)


def test_kompi_wait_at_4096_asks_every_sshd_once(coredns: StockDns, kubectl: Kubectl, tmp_path: Path) -> None:
    """kompi-wait 4096: every worker in DNS, its sshd greets (one listener answers every worker's address)."""
    with answering_addresses(), sshd_banner("0.0.0.0") as port:
        workers = Workers("scale-wait", "wait", 4096, port=port)
        workers.create(kubectl)
        try:
            wait_until_served(coredns, workers, set(range(4096)))
            hostfile = tmp_path / "hostfile"
            hostfile.write_text(workers.cluster.hostfile_text(range(4096)))
            env = {
                **os.environ,
                "KOMPI_SERVICE_DOMAIN": workers.cluster.service_domain,
                "KOMPI_WORKER_PREFIX": workers.prefix,
                "KOMPI_RESOLV_CONF": str(coredns.resolv_conf),
                "KOMPI_HOSTFILE": str(hostfile),
            }
            wait = subprocess.run(
                [sys.executable, str(SCRIPT), "wait", "4096", "--timeout", "120"],
                env=env,
                capture_output=True,
                text=True,
                timeout=180,
                check=False,
            )
            assert wait.returncode == 0, wait.stderr[-3000:]
            assert "4096 workers ready" in wait.stderr
        finally:
            workers.delete(kubectl)
