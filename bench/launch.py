"""Launch at scale: `mpiexec hostname` over N workers on the local cluster's real node, N = 2, 8, 16, 32.

The dev stack with light workers (10m CPU, 32Mi), grown from one size to the next by `kompi up`. For each
N, `mpiexec -n N hostname` runs from the master through `kubectl exec` ROUNDS times; the benchmark
times the first rank's line and the whole job from the moment the command starts, and the per-worker
cost is the slope between the smallest and the largest N. The images launch over ssh from the master
only (plm_rsh_no_tree_spawn / plm_ssh_no_tree_spawn), at most 128 ssh at once (Open MPI's default);
`--tree-spawn` lets the daemons start each other. Each job runs under bash's `time`, whose CPU figure is the
launcher's: mpiexec and the ssh clients it started.
Run as root: venv/bin/python bench/launch.py [--flavor ompi4|ompi5] [--tree-spawn]  (images and engine first)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.local import real_node_cluster
from tests.e2e.live import Kubectl
from tests.e2e.node.mpi import exec_command, run_in
from tests.e2e.port_blocks import PortBlock
from tests.e2e.project import Project

TAGS = {"ompi4": "4.1.4-bookworm-0.1.0", "ompi5": "5.0.11-bookworm-0.1.0"}
LIGHT_POD = {"resources": {"requests": {"cpu": "10m", "memory": "32Mi"}, "limits": {"memory": "512Mi"}}}
WORKERS = (2, 8, 16, 32)
ROUNDS = 3
TREE_SPAWN = {"ompi4": "plm_rsh_no_tree_spawn", "ompi5": "plm_ssh_no_tree_spawn"}  # the images set it to 1


def timed_job(
    kubectl: Kubectl, namespace: str, master: str, ranks: int, options: str = ""
) -> tuple[float, float, float]:
    """Seconds to the first rank's output line and to the job's end, from the start of `kubectl exec`, and
    the CPU seconds of the launcher: mpiexec with the ssh clients it started and reaped (bash's `time`)."""
    timed = f"time -p mpiexec {options} -n {ranks} hostname"
    command = exec_command(kubectl, namespace, master, "bash", "-c", timed)
    # stderr to a file: communicate() on two pipes reads their descriptors and would miss what readline buffered
    with tempfile.TemporaryFile("w+") as errors:
        started = time.monotonic()
        job = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=errors, text=True)
        assert job.stdout is not None
        first = job.stdout.readline()
        first_at = time.monotonic() - started
        rest = job.stdout.read()
        job.wait(600)
        done = time.monotonic() - started
        errors.seek(0)
        err = errors.read()
    hosts = {line for line in (first + rest).split() if line}
    if job.returncode != 0 or len(hosts) != ranks:
        raise RuntimeError(f"mpiexec -n {ranks} exited {job.returncode} on {len(hosts)} hosts: {err[-2000:]}")
    times = dict(line.split() for line in err.splitlines() if line.startswith(("user ", "sys ")))
    return first_at, done, float(times["user"]) + float(times["sys"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flavor", choices=sorted(TAGS), default="ompi4")
    parser.add_argument("--tree-spawn", action="store_true", help="daemons start other daemons over ssh too")
    options = parser.parse_args()
    tag = TAGS[options.flavor]
    mca = f"--mca {TREE_SPAWN[options.flavor]} 0" if options.tree_spawn else ""
    with real_node_cluster(PortBlock.BENCH_LAUNCH, f"localhost/kompi:{tag}") as (cluster, root):
        kubectl = Kubectl(cluster.bin / "kubectl", cluster.kubeconfig)
        project = Project.copy_of("dev", root / "launch", cluster.kubeconfig)
        results: dict[int, tuple[float, ...]] = {}
        try:
            for workers in WORKERS:
                project.set(workers=workers, imageTag=tag, masterPod=LIGHT_POD, workerPod=LIGHT_POD)
                began = time.monotonic()
                out = project.last_json(project.kompi("up", timeout=1800))
                up_seconds = time.monotonic() - began
                namespace, master = out["namespace"], out["masterPod"]
                waited = run_in(kubectl, namespace, master, "kompi-wait", str(workers), "--timeout", "300")
                assert waited.returncode == 0, waited.stderr
                runs = [timed_job(kubectl, namespace, master, workers, mca) for _ in range(ROUNDS)]
                results[workers] = tuple(statistics.median(run[i] for run in runs) for i in range(3))
                print(
                    f"{workers} workers: up {up_seconds:.1f} s, first rank {results[workers][0]:.2f} s, "
                    f"job {results[workers][1]:.2f} s, launcher CPU {results[workers][2]:.2f} s (median of {ROUNDS})",
                    flush=True,
                )
        finally:
            project.kompi("destroy", check=False)
    low, high = WORKERS[0], WORKERS[-1]
    slope = (results[high][1] - results[low][1]) / (high - low)
    cpu_slope = (results[high][2] - results[low][2]) / (high - low)
    spawn = "tree spawn" if options.tree_spawn else "launcher-only ssh"
    print(f"\nmpiexec hostname on the real node ({options.flavor}, {spawn}): seconds, median of {ROUNDS}")
    print("workers  first rank  whole job  launcher CPU")
    for workers, (first, whole, cpu) in results.items():
        print(f"{workers:7}  {first:10.2f}  {whole:9.2f}  {cpu:12.2f}")
    print(
        f"per-worker cost {slope * 1000:.0f} ms of the whole job, {cpu_slope * 1000:.0f} ms of the launcher's CPU"
        f" ({low} to {high} workers; every pod shares this machine's {os.cpu_count()} cores)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
