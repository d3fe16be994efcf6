"""What kompi's readiness probe costs a pod: CPU, wall time and sshd log lines per probe.

Starts one worker pod from kompi's rendered spec (podman, as tests/images does) and runs each check
``--probes`` times: the exec probe as the runtime runs it (``podman exec``, one runc exec each, as
kubelet's exec probes are), the probe program alone inside the pod, and a bare TCP connect (what a
``tcpSocket`` probe does, from the node). For each: CPU seconds of the checking process, CPU of the
sshd children that served it (sshd's reaped-children time), and the lines sshd logged.
Run as root: venv/bin/python bench/images/probe_cost.py [--probes 50] [ompi4|ompi5]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))

from kompi_components import contract
from tests.images.cluster import render_cluster, running_cluster
from tests.images.podman import exec_in, logs, podman

# Runs inside the pod: N times the given command, then the CPU of those children and of sshd's.
INSIDE = """
import os, subprocess, sys, time
def sshd_children():
    fields = open("/proc/1/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")
n, command = int(sys.argv[1]), sys.argv[2:]
before, sshd, start = os.times(), sshd_children(), time.monotonic()
for _ in range(n):
    subprocess.run(command, check=True)
wall, after = time.monotonic() - start, os.times()
time.sleep(0.5)  # let sshd reap the last child
cpu = after.children_user + after.children_system - before.children_user - before.children_system
print(sshd_children() - sshd, cpu, wall)
"""
CONNECT = f"import socket; socket.create_connection(('127.0.0.1', {contract.SSH_PORT})).close()"
BANNER_ONLY = f"exec 3<>/dev/tcp/127.0.0.1/{contract.SSH_PORT}; read -r -t 2 banner <&3; [[ $banner == SSH-2.0-* ]]"
CHECKS = {
    "kompi-ready (bash: banner, then ident)": [contract.READY_PROBE],
    "banner only, no ident (bash)": ["bash", "-c", BANNER_ONLY],
    "TCP connect only (as tcpSocket)": ["python3", "-c", CONNECT],
}


def log_lines(container: str) -> int:
    return len(logs(container).splitlines())


def inside(container: str, probes: int, command: Sequence[str]) -> tuple[float, float, float, int]:
    """sshd CPU, probe CPU and wall seconds per probe, and sshd log lines per probe."""
    lines = log_lines(container)
    result = exec_in(container, ["python3", "-c", INSIDE, str(probes), *command], timeout=600)
    if result.returncode != 0:
        raise RuntimeError(result.stderr)
    sshd, cpu, wall = (float(value) / probes for value in result.stdout.split())
    return sshd, cpu, wall, round((log_lines(container) - lines) / probes)


def runtime_exec(container: str, probes: int) -> float:
    """Wall seconds per probe run through the container runtime (runc exec), as kubelet runs it."""
    start = time.monotonic()
    for _ in range(probes):
        if exec_in(container, [contract.READY_PROBE]).returncode != 0:
            raise RuntimeError("probe failed")
    return (time.monotonic() - start) / probes


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("flavor", nargs="?", default="ompi4")
    parser.add_argument("--probes", type=int, default=50)
    args = parser.parse_args(argv)
    tags = json.loads(podman("images", "--format", "json").stdout)
    image = next(name for entry in tags for name in entry.get("Names") or [] if f":{args.flavor}-" in name)
    rendered = render_cluster(image, workers=1, run_as_root=False)
    with tempfile.TemporaryDirectory() as scratch, running_cluster(rendered, Path(scratch)) as cluster:
        worker = cluster.container(rendered.workers[0].name)
        print(f"{image}, {args.probes} probes each; per probe:")
        print(f"{'check':40} {'sshd CPU ms':>11} {'check CPU ms':>12} {'wall ms':>8} {'log lines':>9}")
        rows = {name: inside(worker, args.probes, command) for name, command in CHECKS.items()}
        for name, (sshd, cpu, wall, lines) in rows.items():
            print(f"{name:40} {sshd * 1e3:11.1f} {cpu * 1e3:12.1f} {wall * 1e3:8.1f} {lines:9}")
        print(f"runtime exec of kompi-ready (podman exec): {runtime_exec(worker, args.probes) * 1e3:.0f} ms wall")
        sshd, cpu, _, lines = rows[next(iter(CHECKS))]
        for period in (2, 10):  # before and after kompi checked every 10 s once started
            per_hour = 3600 // period
            cost = per_hour * (sshd + cpu)
            print(f"every {period:2} s: {cost:5.0f} CPU s and {per_hour * lines} sshd log lines per pod-hour")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
