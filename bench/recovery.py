"""A lost worker mid-training under `kompi-run --restarts`: how long until training goes on by itself, and how
many epochs it costs. Figures from one run.

    venv/bin/python bench/recovery.py [--workers 2 4] [--epochs 12] [--fault-after 3]

The local cluster's real node, the train stack on the ompi5-torch image with a checkpoint volume on the
node's disk; for each worker count, `kompi-run start --restarts 3 -- mpiexec python3 train.py` from the
master, and once epoch ``--fault-after`` is printed, worker 1's pod is deleted. The run's output is followed
(`kompi-run logs --follow`) and each line timestamped as it arrives. Printed per worker count:

- ready: from the deletion to the new worker pod's Ready condition (the API server's clock, to the second);
- resumed: from that Ready to the run's "resumed from ... after epoch K" line (the restart's pause, the
  wait for every worker, mpiexec and the checkpoint's load; the issue's goal is at most 30 s);
- first epoch: from the deletion to the first epoch row of the resumed run;
- epochs lost: the last epoch the first attempt finished minus K (goal: at most 1).

Run as root with the engine built and the training image in podman (images/build.sh ompi5-torch).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.local import real_node_cluster
from bench.training import training_image
from kompi_engine.build.engine import build_engine
from tests.e2e.live import Kubectl
from tests.e2e.node.faults import Stack
from tests.e2e.node.mpi import exec_command, exec_in
from tests.e2e.node.volumes import host_volume
from tests.e2e.port_blocks import PortBlock
from tests.e2e.project import Project
from tests.training_run import TRAIN_SCRIPT, parse

POD = {"resources": {"requests": {"cpu": "100m", "memory": "256Mi"}, "limits": {"memory": "2Gi"}}}
CHECKPOINTS = "/checkpoints"


def ready_at(kubectl: Kubectl, namespace: str, pod: str, not_uid: str) -> float | None:
    """When the pod (a new one, not ``not_uid``) turned Ready, in seconds since the epoch; None if not yet."""
    found = kubectl.get("pod", pod, namespace)
    if not found or found["metadata"]["uid"] == not_uid:
        return None
    for condition in found.get("status", {}).get("conditions", []):
        if condition["type"] == "Ready" and condition["status"] == "True":
            return datetime.fromisoformat(condition["lastTransitionTime"].replace("Z", "+00:00")).timestamp()
    return None


def lost_worker(stack: Stack, name: str, epochs: int, fault_after: int) -> tuple[float, float, float, int]:
    """(ready, resumed, first epoch) seconds and epochs lost, for one run with worker 1 deleted mid-run."""
    train = [TRAIN_SCRIPT, "--epochs", str(epochs), "--checkpoint-dir", f"{CHECKPOINTS}/{name}"]
    start = ["kompi-run", "start", "--name", name, "--restarts", "3", "--detach", "--", "mpiexec", "python3"]
    exec_in(stack.kubectl, stack.namespace, stack.master, *start, *train)
    follow = exec_command(stack.kubectl, stack.namespace, stack.master, "kompi-run", "logs", "--follow", name)
    lines: list[tuple[float, str]] = []
    fault = resumed = first_epoch = 0.0
    uid, resumed_after = "", -1
    with subprocess.Popen(follow, stdout=subprocess.PIPE, text=True) as logs:
        assert logs.stdout is not None
        for line in logs.stdout:
            now = time.time()
            lines.append((now, line))
            text = "".join(part for _, part in lines)
            if not fault and "ranks on" in text and len(parse(text).epochs) >= fault_after:
                uid = stack.kubectl.get("pod", stack.worker(1), stack.namespace)["metadata"]["uid"]  # type: ignore[index]
                fault = time.time()
                stack.kubectl.run("delete", "pod", stack.worker(1), "-n", stack.namespace, "--wait=false")
            elif fault and line.startswith("resumed from ") and not resumed:
                resumed, resumed_after = now, int(line.split()[-1])
            elif resumed and not first_epoch and line.split()[:1] == [str(resumed_after + 1)]:
                first_epoch = now
    ready = ready_at(stack.kubectl, stack.namespace, stack.worker(1), uid)
    output = "".join(part for _, part in lines)
    if not (fault and resumed and first_epoch and ready):
        raise RuntimeError(f"run {name} did not resume:\n{output[-4000:]}")
    # the last epoch the first attempt finished (one may end between the fault and mpiexec's exit)
    finished = parse(output.split("kompi-run: restart 1 of ", 1)[0]).epochs[-1].number
    return ready - fault, resumed - ready, first_epoch - fault, finished - resumed_after


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--fault-after", type=int, default=3)
    options = parser.parse_args()
    build_engine()
    image = training_image()
    print(f"{'workers':>7} {'ready s':>8} {'resumed s':>10} {'first epoch s':>14} {'epochs lost':>12}", flush=True)
    with real_node_cluster(PortBlock.BENCH_TRAINING, image) as (cluster, root):
        kubectl = Kubectl(cluster.bin / "kubectl", cluster.kubeconfig)
        for workers in options.workers:
            name = f"kompi-recover-{workers}"
            volume = Path(tempfile.mkdtemp(dir=root)) / "volume"
            host_volume(kubectl, volume, name, name)
            project = Project.copy_of("train", root / name, cluster.kubeconfig)
            claim = {"name": "checkpoints", "size": "1Gi", "storageClassName": name, "mountPath": CHECKPOINTS}
            tag = image.split(":", 1)[1]
            project.set(clusterName=name, namespace=name, workers=workers, imageTag=tag, masterPod=POD, workerPod=POD)
            project.set(dataVolumes=[claim])
            project.kompi("up")
            stack = Stack(kubectl, cluster, "ompi5", name, workers)
            stack.every_worker_ready()
            run = f"run-{os.getpid()}"
            ready, resumed, first_epoch, lost = lost_worker(stack, run, options.epochs, options.fault_after)
            print(f"{workers:>7} {ready:>8.1f} {resumed:>10.1f} {first_epoch:>14.1f} {lost:>12}", flush=True)
            project.kompi("destroy")
            kubectl.run("delete", "pv", name, "--wait=false", check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
