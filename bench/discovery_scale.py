"""Discovery at 64, 1,024 and 4,096 workers: a stock CoreDNS (`cache 30`) over the local API server.

Each size is a headless Service with that many endpoints in EndpointSlices of 100 (tests/discovery/
stock_dns.py), all ready; `kompi-discover watch` runs as the master runs it, with the stock CoreDNS as
its nameserver. Then, one at a time, a random worker turns not ready and ready again (its endpoint's
`conditions.ready` patched, as the EndpointSlice controller does), and the benchmark times how long the
hostfile takes to drop it and to list it again. It also reports, over a quiet minute at each size, the
queries per second kompi-discover sends, its CPU and CoreDNS's (share of one core), and how long
`kompi-wait N` takes when every sshd answers (one listener on 0.0.0.0 stands for the workers' sshd).
Past one SRV answer (about 800 workers here) a sweep looks every ordinal up to kompi's limit of 4,096 up
by name, so the queries per second from 1,024 workers on are the cost of that probing (issue #44).
Goal: convergence at 4,096 within 2x of that at 64 (median and p95).
Run as root: venv/bin/python bench/discovery_scale.py [--changes N] [--sizes N ...]  (builds the engine
first if needed)
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.discovery import percentile
from bench.local import kwok_cluster
from kompi_engine.build.node_binaries import COREDNS
from kompi_engine.cluster.local import FakeNodes
from kompi_engine.cluster.processes import cpu_seconds
from tests.discovery.banner import sshd_banner
from tests.discovery.module import SCRIPT, kd
from tests.discovery.stock_dns import (
    StockDns,
    Workers,
    answering_addresses,
    stock_coredns,
    wait_until_served,
)
from tests.e2e.live import Kubectl
from tests.e2e.port_blocks import PortBlock

SIZES = (64, 1024, 4096)
QUIET_SECONDS = 60.0
GOAL = 2.0
# port 53 of an address no test session or xdist worker takes (tests/e2e/test_discovery_scale.py: .1, .2, .6, .7)
BENCH_DNS = "127.0.53.20"


def discovery_env(dns: StockDns, workers: Workers, hostfile: Path) -> dict[str, str]:
    return {
        **os.environ,
        "KOMPI_SERVICE_DOMAIN": workers.cluster.service_domain,
        "KOMPI_WORKER_PREFIX": workers.prefix,
        "KOMPI_RESOLV_CONF": str(dns.resolv_conf),
        "KOMPI_HOSTFILE": str(hostfile),
    }


def listed(hostfile: Path) -> set[str]:
    try:
        return {line.split()[0] for line in hostfile.read_text().splitlines()}
    except FileNotFoundError:
        return set()


def until_listed(hostfile: Path, names: set[str], present: bool, timeout: float = 60.0) -> float:
    """Poll the hostfile every 10 ms; the monotonic time it first lists all ``names`` (or none of them)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        hosts = listed(hostfile)
        if (names <= hosts) if present else not (names & hosts):
            return time.monotonic()
        time.sleep(0.01)
    raise TimeoutError(f"the hostfile did not converge ({len(names)} names, present={present})")


def measure(dns: StockDns, kubectl: Kubectl, count: int, changes: int, scratch: Path) -> dict[str, float]:
    with answering_addresses(), sshd_banner("0.0.0.0") as port:
        workers = Workers(f"bench-discovery-{count}", "bench", count, port=port)
        workers.create(kubectl)
        try:
            wait_until_served(dns, workers, set(range(count)))
            hostfile = scratch / f"hostfile-{count}"
            env = discovery_env(dns, workers, hostfile)
            log = (scratch / f"discover-{count}.log").open("w")
            watcher = subprocess.Popen([sys.executable, str(SCRIPT), "watch"], env=env, stderr=log)
            try:
                srv = kd.dns_client.query_srv(workers.cluster.srv_name, dns.servers)
                srv_holds = float(len(srv.records))
                everyone = {workers.cluster.fqdn(o) for o in range(count)}
                until_listed(hostfile, everyone, True, 120)
                # a quiet minute: queries, CPU of the master's discovery and of CoreDNS
                time.sleep(2)
                cpu_watch, cpu_dns, began = cpu_seconds(watcher.pid), dns.cpu_seconds(), time.monotonic()
                time.sleep(QUIET_SECONDS)
                quiet = time.monotonic() - began
                figures = {
                    "srv_holds": srv_holds,
                    "watch_cpu": (cpu_seconds(watcher.pid) - cpu_watch) / quiet,
                    "dns_cpu": (dns.cpu_seconds() - cpu_dns) / quiet,
                }
                drops, joins = [], []
                for ordinal in random.sample(range(count), changes):
                    name = {workers.cluster.fqdn(ordinal)}
                    changed = workers.set_ready(kubectl, ordinal, False)
                    drops.append(until_listed(hostfile, name, False) - changed)
                    changed = workers.set_ready(kubectl, ordinal, True)
                    joins.append(until_listed(hostfile, name, True) - changed)
            finally:
                watcher.terminate()
                watcher.wait(10)
                log.close()
            stopped = (scratch / f"discover-{count}.log").read_text().splitlines()[-1]
            # "stopping: Q DNS queries in T s (R/s)": the whole run, quiet minute and changes
            figures["qps"] = float(stopped.rsplit("(", 1)[1].split("/")[0])
            begun = time.monotonic()
            wait = subprocess.run(
                [sys.executable, str(SCRIPT), "wait", str(count), "--timeout", "300"],
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
            figures["wait"] = time.monotonic() - begun
            if wait.returncode != 0:
                raise RuntimeError(wait.stderr[-2000:])
            figures |= {
                "drop_p50": statistics.median(drops),
                "drop_p95": percentile(drops, 0.95),
                "join_p50": statistics.median(joins),
                "join_p95": percentile(joins, 0.95),
            }
            return figures
        finally:
            workers.delete(kubectl)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=10, help="readiness changes per size (each way)")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES), help="worker counts to measure")
    options = parser.parse_args()
    sizes = sorted(options.sizes)
    random.seed(26)
    results = {}
    with kwok_cluster(PortBlock.BENCH_DISCOVERY, FakeNodes(count=1)) as (cluster, _scratch):
        kubectl = Kubectl(cluster.bin / "kubectl", cluster.kubeconfig)
        with (
            tempfile.TemporaryDirectory() as scratch,
            stock_coredns(cluster.bin / COREDNS, cluster.kubeconfig, BENCH_DNS, Path(scratch) / "dns") as dns,
        ):
            for count in sizes:
                results[count] = measure(dns, kubectl, count, options.changes, Path(scratch))
                print(f"{count} workers: {results[count]}", flush=True)
    print(f"\nhostfile convergence, stock CoreDNS with cache 30, {options.changes} changes each way (seconds)")
    print(
        "workers  SRV answer holds  drop p50  drop p95  join p50  join p95  queries/s  discover CPU  CoreDNS CPU"
        "  kompi-wait N"
    )
    for count, f in results.items():
        print(
            f"{count:7}  {f['srv_holds']:16.0f}"
            f"  {f['drop_p50']:8.2f}  {f['drop_p95']:8.2f}  {f['join_p50']:8.2f}  {f['join_p95']:8.2f}"
            f"  {f['qps']:9.0f}  {f['watch_cpu']:11.0%}  {f['dns_cpu']:11.0%}  {f['wait']:11.2f} s"
        )
    if len(sizes) < 2:
        return
    small, large = results[sizes[0]], results[sizes[-1]]
    ratios = {key: large[key] / small[key] for key in ("drop_p50", "drop_p95", "join_p50", "join_p95")}
    met = sum(ratio <= GOAL for ratio in ratios.values())
    print(
        f"{sizes[-1]} against {sizes[0]}: "
        + ", ".join(f"{key} {ratio:.2f}x" for key, ratio in ratios.items())
        + f"; {met} of {len(ratios)} within the goal of {GOAL:g}x"
    )


if __name__ == "__main__":
    main()
