"""MPI between kompi's containers against native Open MPI on this machine, in the same run.

For each Open MPI flavor (4: Debian's, 5: the PyPI wheel; natively the same builds, see native.py) and
each rank count, runs bench/images/mpi_bench.py (allreduce and ping-pong, 8 B and 4 MiB) as a kompi
job (one rank per worker pod, each requesting its share of the cores, a bare ``mpiexec`` on the
master, kompi's defaults) and natively (``mpiexec -n N --mca btl tcp,self``, oversubscribed when
N > cores), alternating the two ``--repeats`` times and keeping the median of each figure. Prints
the table, the ratios kompi/native and Open MPI 5 against 4. Run as root with podman, buildah and
runc (as tests/images does), on an idle machine:

    venv/bin/python bench/images/vs_native.py [--on podman|real-node] [--ranks 2,4] [--repeats 3]
        [--env OMPI_MCA_x=y] [ompi4 ompi5]

``--on podman`` (the default) runs kompi's rendered pods as podman containers on a podman network;
``--on real-node`` runs them through `kompi up` on the local cluster's real node (kubelet, containerd,
the bridge CNI; real_node_pods.py), which needs the engine (`bin/kompi engine build`).

``--env`` passes variables to the kompi job's mpiexec (to try MCA settings without rebuilding).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from native import NativeMPI, native
from real_node_pods import Run, real_node_pods

from tests.images.cluster import RunningCluster, render_cluster, running_cluster
from tests.images.podman import REPO_ROOT, exec_in, podman, podman_env

PROGRAM = Path(__file__).with_name("mpi_bench.py")
CODE_DIR = "/kompi-bench"
SMALL, LARGE = "8", str(4 * 2**20)
Figures = dict[str, float]
# (label, kind, size, higher is better)
METRICS = (
    ("allreduce 8 B us", "allreduce", SMALL, False),
    ("allreduce 4 MiB MB/s", "allreduce", LARGE, True),
    ("ping-pong 8 B us", "pingpong", SMALL, False),
    ("ping-pong 4 MiB MB/s", "pingpong", LARGE, True),
)


def build_images(flavors: Sequence[str]) -> dict[str, str]:
    result = subprocess.run(
        [str(REPO_ROOT / "images" / "build.sh"), *flavors],
        capture_output=True,
        text=True,
        env={**podman_env(), "PYTHON": sys.executable},
        check=True,
    )
    return dict(line.split() for line in result.stdout.splitlines())


def figures(output: str) -> Figures:
    """mpi_bench.py's JSON line as microseconds (8 B) and MB/s (4 MiB)."""
    seconds = json.loads(output.strip().splitlines()[-1])["seconds"]
    values = {}
    for label, kind, size, _ in METRICS:
        value = seconds[kind][size]
        values[label] = value * 1e6 if size == SMALL else int(size) / value / 1e6
    return values


def cpu_request(ranks: int) -> str:
    """Each worker's share of this machine's cores, as the pods would request it: kompi derives the
    ranks' settings from it (mpi_env.py: they yield the CPU when a pod has fewer CPUs than slots)."""
    return f"{(os.cpu_count() or 1) * 1000 // ranks}m"


@contextmanager
def kompi_cluster(image: str, workers: int) -> Iterator[RunningCluster]:
    """``workers`` pods with one slot each and their CPU share; podman does not enforce the request."""
    stack = {"kompi:workerPod": json.dumps({"resources": {"requests": {"cpu": cpu_request(workers)}}})}
    with tempfile.TemporaryDirectory() as scratch:
        code = Path(scratch) / "code"
        code.mkdir()
        shutil.copy(PROGRAM, code / PROGRAM.name)
        code.chmod(0o755)
        mount = f"type=bind,source={code},destination={CODE_DIR},ro=true"
        rendered = render_cluster(image, workers=workers, run_as_root=False, config=stack)
        with running_cluster(rendered, Path(scratch) / "pods", extra_mounts=[mount]) as cluster:
            yield cluster


def run_kompi(cluster: RunningCluster, ranks: int, env: Sequence[str]) -> str:
    """One rank on each worker, as kompi-discover lists them: a bare mpiexec."""
    text = "".join(f"{pod.fqdn} slots=1\n" for pod in cluster.rendered.workers[:ranks])
    exec_in(cluster.master, ["sh", "-c", 'cat > "$KOMPI_HOSTFILE"'], stdin=text)
    env_args = [arg for item in env for arg in ("--env", item)]
    result = podman(
        "exec", *env_args, cluster.master, "mpiexec", "python3", f"{CODE_DIR}/{PROGRAM.name}", check=False, timeout=900
    )
    if result.returncode != 0:
        raise RuntimeError(f"kompi -n {ranks} failed:\n{result.stderr[-3000:]}")
    return result.stdout


@contextmanager
def podman_job(image: str, ranks: int) -> Iterator[Run]:
    with kompi_cluster(image, ranks) as cluster:
        yield lambda env: run_kompi(cluster, ranks, env)


def kompi_jobs(on: str, images: dict[str, str], stack: ExitStack) -> Callable[[str, int], AbstractContextManager[Run]]:
    """Where each (image, ranks) job gets its kompi pods: podman containers, or `kompi up` on the real node."""
    if on == "podman":
        return podman_job
    pods = stack.enter_context(real_node_pods(list(images.values())))
    return lambda image, ranks: pods.job(image, ranks, cpu_request(ranks), PROGRAM.read_text())


def medians(samples: Sequence[Figures]) -> Figures:
    return {label: statistics.median(sample[label] for sample in samples) for label, *_ in METRICS}


def measure(run: Run, mpi: NativeMPI, ranks: int, repeats: int, env: Sequence[str]) -> tuple[Figures, Figures]:
    """Median kompi and native figures, the two alternating so that both see the same machine."""
    kompi, bare = [], []
    for _ in range(repeats):
        bare.append(figures(mpi.run(ranks, PROGRAM)[1]))
        kompi.append(figures(run(env)))
    return medians(kompi), medians(bare)


def ratio(kompi: float, bare: float) -> float:
    return kompi / bare if bare else float("nan")


def print_rows(flavor: str, ranks: int, kompi: Figures, bare: Figures) -> None:
    for label, *_ in METRICS:
        gap = ratio(kompi[label], bare[label])
        print(f"{flavor:6} {ranks:5} {label:22} {kompi[label]:10.1f} {bare[label]:10.1f} {gap:8.2f}")


def print_flavor_gap(results: dict[tuple[str, int], tuple[Figures, Figures]]) -> None:
    """Open MPI 5 against 4, kompi and native, where both flavors ran."""
    print(f"\n{'ranks':5} {'metric':22} {'kompi 5/4':>10} {'native 5/4':>10}")
    for (flavor, ranks), (kompi5, native5) in sorted(results.items()):
        if flavor != "ompi5" or ("ompi4", ranks) not in results:
            continue
        kompi4, native4 = results[("ompi4", ranks)]
        for label, *_ in METRICS:
            kompi_gap, native_gap = ratio(kompi5[label], kompi4[label]), ratio(native5[label], native4[label])
            print(f"{ranks:5} {label:22} {kompi_gap:10.2f} {native_gap:10.2f}")


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("flavors", nargs="*", choices=["ompi4", "ompi5", []])
    parser.add_argument("--on", choices=["podman", "real-node"], default="podman", help="where kompi's pods run")
    parser.add_argument("--ranks", default=f"{os.cpu_count()},{2 * (os.cpu_count() or 1)}")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--env", action="append", default=[], help="VAR=VALUE for the kompi job's mpiexec")
    return parser.parse_args(argv)


def main(argv: Sequence[str]) -> int:
    args = parse_args(argv)
    args.flavors = args.flavors or ["ompi4", "ompi5"]
    rank_counts = [int(value) for value in args.ranks.split(",")]
    images = build_images(args.flavors)
    with ExitStack() as stack:
        job = kompi_jobs(args.on, images, stack)
        load = os.getloadavg()[0]
        print(f"cores {os.cpu_count()}, load {load:.2f}, kompi's pods on {args.on}; ratios are kompi/native (same run)")
        print(f"{'flavor':6} {'ranks':5} {'metric':22} {'kompi':>10} {'native':>10} {'ratio':>8}")
        results: dict[tuple[str, int], tuple[Figures, Figures]] = {}
        for flavor in args.flavors:
            mpi = native(flavor)
            for ranks in rank_counts:
                with job(images[flavor], ranks) as run:
                    start = time.monotonic()
                    results[(flavor, ranks)] = measure(run, mpi, ranks, args.repeats, args.env)
                print_rows(flavor, ranks, *results[(flavor, ranks)])
                print(f"# {flavor} -n {ranks}: {time.monotonic() - start:.0f} s, load {os.getloadavg()[0]:.2f}")
    print_flavor_gap(results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
