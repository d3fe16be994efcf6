"""Worker discovery figures: hostfile convergence latency and cold start to the first mpiexec.

kompi: kompi-discover polls cluster DNS (SRV) every 1 s; kube-openmpi: a sidecar relists the workers
every 15 s. Both are measured against the same DNS server (tests/discovery/dns_server.py):
- convergence: 20 readiness changes at random moments; kompi's loop runs as is (period 1 s), the
  kube-openmpi loop is the same code with the period scaled down 10x (1.5 s) and its latencies
  multiplied by 10 (a poll loop's latency is proportional to its period).
- cold start (containers, ompi4 image): master + N workers started together; kompi launches with
  `kompi-wait N && mpiexec hostname`; kube-openmpi's launch is simulated on the same run's
  timestamps: the first 15 s poll tick (from the master's start) after the last worker was ready,
  plus the same mpiexec time.
Run: venv/bin/python bench/discovery.py [--no-containers]
"""

from __future__ import annotations

import math
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.discovery.dns_server import ClusterDns
from tests.discovery.module import kd

CHANGES = 20
KUBE_OPENMPI_PERIOD = 15.0
SCALE = 10.0
DNS_ADDRESS = "127.0.0.77"
DOMAIN = "bench.hpc.svc.cluster.local"


def poll_loop(cluster: kd.cluster.Cluster, hostfile: Path, period: float, stop: threading.Event) -> None:
    discovery = kd.sweep.Discovery(cluster, [(DNS_ADDRESS, 53)])
    current = None
    while not stop.is_set():
        started = time.monotonic()
        try:
            text = cluster.hostfile_text(discovery.sweep())
        except kd.dns_client.DnsError:
            text = current  # keep the last hostfile, as kompi-discover does
        if text is not None and text != current:
            kd.cluster.write_atomically(hostfile, text)
            current = text
        stop.wait(max(0.0, period - (time.monotonic() - started)))


def converge(period: float, server: ClusterDns) -> list[float]:
    cluster = kd.cluster.Cluster(DOMAIN, "bench-worker", 1)
    for ordinal in range(4):  # start from no ready worker
        server.withdraw(cluster.fqdn(ordinal))
    with tempfile.TemporaryDirectory() as scratch:
        hostfile = Path(scratch) / "hostfile"
        stop = threading.Event()
        thread = threading.Thread(target=poll_loop, args=(cluster, hostfile, period, stop), daemon=True)
        thread.start()
        ready: set[int] = set()
        latencies = []
        for change in range(CHANGES):
            time.sleep(random.uniform(0, period))
            ordinal = change % 4
            if ordinal in ready:
                ready.discard(ordinal)
                changed = server.withdraw(cluster.fqdn(ordinal))
            else:
                ready.add(ordinal)
                changed = server.publish(cluster.fqdn(ordinal), "10.0.0.1")
            expected = cluster.hostfile_text(ready)
            while not (hostfile.exists() and hostfile.read_text() == expected):
                time.sleep(0.005)
            latencies.append(time.time() - changed)
        stop.set()
        thread.join()
    return latencies


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(fraction * len(ordered)) - 1)]


def cold_start(workers: int) -> tuple[float, float]:
    from tests.discovery.harness import dns_cluster
    from tests.discovery.test_discovery_containers import exec_background
    from tests.images.cluster import render_cluster
    from tests.images.podman import podman

    image = podman("images", "--format", "{{.Repository}}:{{.Tag}}", "localhost/kompi:4.1.4-bookworm-0.1.0").stdout
    rendered = render_cluster(image.split()[0], workers=workers, run_as_root=False)
    with tempfile.TemporaryDirectory() as scratch, dns_cluster(rendered, Path(scratch)) as cluster:
        start = time.time()
        cluster.start_ready(rendered.master)
        master = cluster.containers[rendered.master.name]
        job = exec_background(
            master,
            f"kompi-wait {workers} --timeout 120 && s=$(date +%s.%N) && mpiexec hostname"
            " && echo DONE $s $(date +%s.%N)",
        )
        names = [cluster.start(pod) for pod in rendered.workers]
        from tests.images.pod_like import wait_ready

        last_ready = start
        pending = dict(zip(names, rendered.workers, strict=True))
        while pending:  # publish each worker as soon as its probe passes
            for name, pod in list(pending.items()):
                if wait_ready(name, pod.container, timeout=120) is not None:
                    last_ready = cluster.dns.publish(pod.fqdn, cluster.address(pod))
                    del pending[name]
        out, err = job.communicate(timeout=180)
        if job.returncode != 0:
            raise RuntimeError(err)
        _, mpi_start, mpi_end = next(line for line in out.splitlines() if line.startswith("DONE")).split()
        kompi = float(mpi_end) - start
        tick = start + math.ceil((last_ready - start) / KUBE_OPENMPI_PERIOD) * KUBE_OPENMPI_PERIOD
        kube_openmpi = tick - start + (float(mpi_end) - float(mpi_start))
        return kompi, kube_openmpi


def main() -> None:
    random.seed(4)
    server = ClusterDns(DNS_ADDRESS, DOMAIN)
    try:
        kompi = converge(1.0, server)
        scaled = [value * SCALE for value in converge(KUBE_OPENMPI_PERIOD / SCALE, server)]
    finally:
        server.close()
    print(f"hostfile convergence over {CHANGES} changes (seconds)")
    print(
        f"  kompi (DNS SRV, 1 s poll):        p50 {statistics.median(kompi):6.2f}  p95 {percentile(kompi, 0.95):6.2f}"
    )
    print(
        f"  kube-openmpi (15 s poll, x{SCALE:g}):  p50 {statistics.median(scaled):6.2f}  "
        f"p95 {percentile(scaled, 0.95):6.2f}"
    )
    print(
        f"  ratio kube-openmpi/kompi:         p50 {statistics.median(scaled) / statistics.median(kompi):6.1f}  "
        f"p95 {percentile(scaled, 0.95) / percentile(kompi, 0.95):6.1f}"
    )
    if "--no-containers" in sys.argv:
        return
    print("cold start to first successful mpiexec (seconds, ompi4 containers)")
    for workers in (2, 4, 8):
        kompi_s, kube_s = cold_start(workers)
        print(
            f"  {workers} workers: kompi {kompi_s:6.2f}  kube-openmpi (simulated 15 s poll) {kube_s:6.2f}"
            f"  ratio {kube_s / kompi_s:4.1f}"
        )


if __name__ == "__main__":
    main()
