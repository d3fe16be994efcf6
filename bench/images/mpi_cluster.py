"""Open MPI 4 vs 5 in kompi's images: pod readiness, mpiexec launch and allreduce over the pod network.

Starts 3 workers + master per flavor from kompi's rendered pods (podman, as tests/images does) and
reports: seconds until every pod is ready, wall time of a bare ``mpiexec true``-like job (launch
overhead over ssh), allreduce latency (8 B) and bandwidth (4 MiB). Run as root on a machine with
podman, buildah and runc: venv/bin/python bench/images/mpi_cluster.py
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))

from tests.images.cluster import RunningCluster, render_cluster, running_cluster
from tests.images.podman import REPO_ROOT, exec_in, podman_env

WORKERS = 3
CODE_DIR = "/kompi-bench"
LATENCY_BYTES, BANDWIDTH_BYTES = "8", str(4 * 2**20)


def build_images() -> dict[str, str]:
    result = subprocess.run(
        [str(REPO_ROOT / "images" / "build.sh")],
        capture_output=True,
        text=True,
        env={**podman_env(), "PYTHON": sys.executable},
        check=True,
    )
    return dict(line.split() for line in result.stdout.splitlines())


def write_hostfile(cluster: RunningCluster) -> None:
    text = "".join(f"{pod.fqdn} slots=1\n" for pod in cluster.rendered.workers)
    exec_in(cluster.master, ["sh", "-c", 'cat > "$KOMPI_HOSTFILE"'], stdin=text)


def mpiexec(cluster: RunningCluster, *command: str) -> tuple[float, str]:
    start = time.monotonic()
    result = exec_in(cluster.master, ["mpiexec", *command], timeout=300)
    if result.returncode != 0:
        raise RuntimeError(result.stderr)
    return time.monotonic() - start, result.stdout


def measure(image: str, scratch: Path) -> dict[str, float]:
    code = scratch / "code"
    code.mkdir(parents=True)
    shutil.copy(Path(__file__).with_name("allreduce_bench.py"), code / "allreduce_bench.py")
    code.chmod(0o755)
    mount = f"type=bind,source={code},destination={CODE_DIR},ro=true"
    rendered = render_cluster(image, workers=WORKERS, run_as_root=False)
    start = time.monotonic()
    with running_cluster(rendered, scratch / "pods", extra_mounts=[mount]) as cluster:
        ready = time.monotonic() - start
        write_hostfile(cluster)
        launch, _ = mpiexec(cluster, "hostname")
        _, output = mpiexec(cluster, "python3", f"{CODE_DIR}/allreduce_bench.py")
    seconds = json.loads(output.strip().splitlines()[-1])["seconds"]
    return {
        "ready_s": ready,
        "launch_s": launch,
        "latency_us": seconds[LATENCY_BYTES] * 1e6,
        "bandwidth_MBps": int(BANDWIDTH_BYTES) / seconds[BANDWIDTH_BYTES] / 1e6,
    }


def main() -> int:
    images = build_images()
    print(f"{'image':42} {'ready s':>8} {'launch s':>9} {'8 B us':>8} {'4 MiB MB/s':>11}")
    for image in images.values():
        with tempfile.TemporaryDirectory() as scratch:
            row = measure(image, Path(scratch))
        print(
            f"{image:42} {row['ready_s']:8.2f} {row['launch_s']:9.2f} "
            f"{row['latency_us']:8.1f} {row['bandwidth_MBps']:11.0f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
