"""The hostfile at 1,500 to 4,096 workers, from a stock CoreDNS (``cache 30``) over the local API server.

One SRV answer from CoreDNS holds about 800 to 1,100 workers; before kompi looked the rest up by name, the
hostfile listed 1,203 of 1,500 workers and 1,193 of 4,096, and `kompi-discover once` exited 0. Before it
looked up every ordinal below its limit (issue #44), a block of 65 or more workers that were not ready could
hide every ready one above it, depending on which records CoreDNS put in the cut answer.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kompi_engine.build.node_binaries import COREDNS
from kompi_engine.cluster.local import LocalCluster
from tests.discovery.banner import sshd_banner
from tests.discovery.module import SCRIPT, kd
from tests.discovery.stock_dns import StockDns, Workers, answering_addresses, stock_coredns, wait_until_served
from tests.e2e.live import Kubectl
from tests.e2e.port_blocks import shift

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def coredns(cluster: LocalCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[StockDns]:
    # port 53 of an address of its own: each session and xdist worker (port_blocks.shift: 0, 100, 500, 600) gets
    # another one, apart from bench/discovery_scale.py's
    address = f"127.0.53.{1 + shift(os.environ) // 100}"
    with stock_coredns(cluster.bin / COREDNS, cluster.kubeconfig, address, tmp_path_factory.mktemp("dns")) as dns:
        yield dns


def discovery_env(dns: StockDns, workers: Workers) -> dict[str, str]:
    """The master's environment for kompi-discover, its resolv.conf naming the stock CoreDNS."""
    return {
        **os.environ,
        "KOMPI_SERVICE_DOMAIN": workers.cluster.service_domain,
        "KOMPI_WORKER_PREFIX": workers.prefix,
        "KOMPI_RESOLV_CONF": str(dns.resolv_conf),
    }


def discover_once(dns: StockDns, workers: Workers) -> subprocess.CompletedProcess[str]:
    """`kompi-discover once` as the master runs it."""
    return subprocess.run(
        [sys.executable, str(SCRIPT), "once"],
        env=discovery_env(dns, workers),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def ordinals(*blocks: range) -> set[int]:
    return {ordinal for block in blocks for ordinal in block}


@pytest.mark.parametrize(
    ("count", "not_ready"),
    [
        (1500, {7, 750, 1499}),
        (4096, {7, 2048, 4095}),
        # issue #44's blocks of late workers: 300 in a row, and two separate blocks of 200
        (1800, ordinals(range(900, 1200))),
        (4096, ordinals(range(1000, 1200), range(2600, 2800))),
    ],
    ids=["1500", "4096", "1800-one-block", "4096-two-blocks"],
)
def test_the_hostfile_lists_every_ready_worker(
    coredns: StockDns, kubectl: Kubectl, count: int, not_ready: set[int]
) -> None:
    workers = Workers(f"scale-{count}-{len(not_ready)}", "big", count)
    ready = set(range(count)) - not_ready
    workers.create(kubectl, ready)
    try:
        wait_until_served(coredns, workers, ready)
        srv = kd.dns_client.query_srv(workers.cluster.srv_name, coredns.servers)
        assert not srv.complete, f"one answer held all {len(srv.records)} workers: the test would miss the cut"
        result = discover_once(coredns, workers)
        assert result.returncode == 0, result.stderr
        lines = result.stdout.splitlines()
        assert lines == [f"{workers.cluster.fqdn(o)} slots=1" for o in sorted(ready)], (
            f"{len(lines)} of {len(ready)} ready workers listed"
        )
    finally:
        workers.delete(kubectl)


def test_a_late_worker_above_a_block_is_listed_within_two_sweeps(
    coredns: StockDns, kubectl: Kubectl, tmp_path: Path
) -> None:
    """The watcher's hostfile at 1,800 workers with 900-1199 not ready: exact, and a worker of the block that
    turns ready is listed within CoreDNS's TTL (5 s: its cache serves the old answer that long) and 2 sweeps."""
    workers = Workers("scale-late", "late", 1800)
    ready = set(range(1800)) - set(range(900, 1200))
    workers.create(kubectl, ready)
    hostfile = tmp_path / "hostfile"
    env = {**discovery_env(coredns, workers), "KOMPI_HOSTFILE": str(hostfile)}
    log = (tmp_path / "discover.log").open("w")
    watcher = subprocess.Popen([sys.executable, str(SCRIPT), "watch"], env=env, stderr=log)
    try:
        wait_until_served(coredns, workers, ready)
        expected = {workers.cluster.fqdn(o) for o in ready}
        assert until(lambda: hosts(hostfile) == expected, 60), f"{len(hosts(hostfile))} of {len(ready)} listed"
        changed = workers.set_ready(kubectl, 1100, True)
        late = workers.cluster.fqdn(1100)
        assert until(lambda: late in hosts(hostfile), 30), (tmp_path / "discover.log").read_text()[-2000:]
        took = time.monotonic() - changed
        assert took < 5 + 2 + 1, f"listed {took:.1f} s after it turned ready"  # TTL, 2 sweeps, kubectl's return
    finally:
        watcher.terminate()
        watcher.wait(10)
        log.close()
        workers.delete(kubectl)


def hosts(hostfile: Path) -> set[str]:
    return kd.cluster.hostfile_hosts(hostfile)


def until(condition: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


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
