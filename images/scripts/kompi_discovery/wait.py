"""`kompi-wait N`: workers 0..N-1 in DNS, answering with an SSH banner and in the hostfile, or after the
timeout exit 1 naming the missing ones."""

from __future__ import annotations

import socket
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .cluster import Cluster, hostfile_hosts
from .dns_client import DnsError, Server
from .log import log
from .sweep import Discovery

SSH_PROBES = 64  # SSH banner checks of kompi-wait in flight at once
MISSING_NAMED = 20  # kompi-wait names this many missing workers, then counts the rest


def ssh_banner(host: str, port: int, timeout: float = 1.0) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.settimeout(timeout)
            return sock.recv(256).startswith(b"SSH-")
    except OSError:
        return False


def wait(
    cluster: Cluster,
    count: int,
    timeout: float,
    hostfile: Path | None,
    poll: float = 0.2,
    servers: Sequence[Server] | None = None,
) -> int:
    """0 once workers 0..count-1 are ready (DNS, SSH banner, hostfile); 1 naming the missing ones.

    A worker's sshd is asked (many at a time) until it answers once, and again only after the worker
    left DNS; the port is the SRV records' (the Service's ssh port).
    """
    deadline = time.monotonic() + timeout
    # A worker missing from one answer is missing for kompi-wait: it waits for all of them at once. It asks
    # about workers 0..count-1 only, so a cut answer needs no lookups past them (it sweeps 5 times a second).
    discovery = Discovery(cluster, servers, misses_to_drop=1, limit=count, expected=count)
    answered: set[int] = set()  # sshd answered since the worker was last seen ready
    missing: dict[int, str] = {}
    with ThreadPoolExecutor(SSH_PROBES) as probes:
        while True:
            try:
                ready = discovery.sweep()
                answered &= ready
                unprobed = [o for o in range(count) if o in ready and o not in answered]
                addresses = discovery.address(unprobed)
                hosts = [addresses.get(o) or cluster.fqdn(o) for o in unprobed]
                banners = probes.map(ssh_banner, hosts, [discovery.port] * len(unprobed))
                answered |= {o for o, ok in zip(unprobed, banners, strict=True) if ok}
                listed = hostfile_hosts(hostfile) if hostfile else None
                missing = {}
                for ordinal in range(count):
                    if ordinal not in ready:
                        missing[ordinal] = "not ready in DNS"
                    elif ordinal not in answered:
                        missing[ordinal] = "sshd does not answer"
                    elif listed is not None and cluster.fqdn(ordinal) not in listed:
                        missing[ordinal] = f"not in {hostfile} yet"
            except DnsError as error:
                missing = {ordinal: str(error) for ordinal in range(count)}
            if not missing:
                log(f"{count} workers ready")
                return 0
            if time.monotonic() >= deadline:
                named = sorted(missing.items())[:MISSING_NAMED]
                names = ", ".join(f"{cluster.worker_prefix}-{o} ({why})" for o, why in named)
                more = f" and {len(missing) - len(named)} more" if len(missing) > len(named) else ""
                log(f"timed out after {timeout:g}s waiting for {count} workers; {len(missing)} missing: {names}{more}")
                return 1
            time.sleep(max(0.0, min(poll, deadline - time.monotonic())))
