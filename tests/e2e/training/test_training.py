"""PyTorch training on kompi's real node, as an ML engineer runs it: the training image, two workers, a
checkpoint volume, `kubectl exec <master> -- mpiexec python3 /opt/kompi/training/train.py`.

The run learns the digits, gives the same losses run after run, fails within 60 s when a worker is lost
mid-training and resumes from its checkpoint on the next run, or by itself under `kompi-run`, which also
outlives the terminal that started it; the same training as a one-shot run succeeds and releases the workers.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from kompi_engine.cluster.local import LocalCluster
from tests.e2e.live import Kubectl, wait_until
from tests.e2e.node.faults import EXIT_WITHIN, Stack
from tests.e2e.node.mpi import exec_command, exec_in, run_in
from tests.e2e.node.test_jobs import job_finished, job_pod, termination_message
from tests.e2e.node.volumes import host_volume
from tests.e2e.project import Project
from tests.e2e.training.conftest import TRAINING_POD
from tests.training_run import TRAIN_SCRIPT, TrainingRun, parse

WORKERS = 2
EPOCHS = 12
MIN_ACCURACY = 0.9
CHECKPOINTS = "/checkpoints"  # the stack's data volume, on the node's disk (a host-path PersistentVolume)


@dataclass(frozen=True)
class TrainingStack:
    stack: Stack
    volume: Path  # the checkpoint volume's directory on the node


def training_project(
    cluster: LocalCluster, kubectl: Kubectl, image: str, directory: Path, name: str, **settings: object
) -> tuple[Project, Path]:
    """The dev stack on the training image with a checkpoint volume, ``settings`` on top."""
    volume = directory / "volume"
    storage_class = f"{name}-{os.getpid()}"
    host_volume(kubectl, volume, storage_class, storage_class)
    project = Project.copy_of("dev", directory / "project", cluster.kubeconfig)
    project.set(
        clusterName=name,
        namespace=name,
        workers=WORKERS,
        imageTag=image.split(":", 1)[1],
        masterPod=TRAINING_POD,
        workerPod=TRAINING_POD,
        dataVolumes=[
            {"name": "checkpoints", "size": "1Gi", "storageClassName": storage_class, "mountPath": CHECKPOINTS}
        ],
        **settings,
    )
    return project, volume


@pytest.fixture(scope="module")
def trained(
    training_cluster: LocalCluster,
    training_kubectl: Kubectl,
    training_image: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[TrainingStack]:
    """One interactive stack for the tests that run `mpiexec` themselves."""
    name = "kompi-train"
    project, volume = training_project(
        training_cluster, training_kubectl, training_image, tmp_path_factory.mktemp(name), name
    )
    try:
        project.kompi("up")
        stack = Stack(training_kubectl, training_cluster, "ompi5", name, WORKERS)
        stack.every_worker_ready()
        yield TrainingStack(stack, volume)
    finally:
        project.kompi("destroy", check=False)
        training_kubectl.run("delete", "pv", f"{name}-{os.getpid()}", "--wait=false", check=False)


def train(stack: Stack, *args: str, launcher: Sequence[str] = ()) -> TrainingRun:
    """`mpiexec [launcher] python3 train.py [args]` in the master; the run as it printed it."""
    command = ["mpiexec", *launcher, "python3", TRAIN_SCRIPT, *args]
    result = run_in(stack.kubectl, stack.namespace, stack.master, *command, timeout=300)
    assert result.returncode == 0, f"training exited {result.returncode}:\n{result.stdout}\n{result.stderr[-3000:]}"
    return parse(result.stdout)


def test_two_workers_learn_the_digits_the_same_way_every_run(trained: TrainingStack) -> None:
    runs = [
        train(trained.stack, "--epochs", str(EPOCHS), "--checkpoint-dir", f"{CHECKPOINTS}/{attempt}")
        for attempt in ("first", "second")
    ]
    first, second = runs
    print(f"\n{first.final_line}; epochs took {[epoch.seconds for epoch in first.epochs]} s")
    assert (first.ranks, first.hosts, first.backend) == (WORKERS, WORKERS, "gloo")
    assert first.final_accuracy is not None and first.final_accuracy >= MIN_ACCURACY
    assert second.final_line == first.final_line  # the same seed: the same loss to the last digit
    # rank 0 wrote its checkpoint and result on the volume, where a later run or a notebook finds them
    result = json.loads((trained.volume / "first" / "result.json").read_text())
    assert result["epochs"] == EPOCHS and result["ranks"] == WORKERS
    assert f"test accuracy {result['test_accuracy']:.4f}" in str(first.final_line)
    assert (trained.volume / "first" / "checkpoint.pt").stat().st_size > 0


def test_a_worker_lost_mid_training_fails_the_run_and_the_next_run_resumes(
    trained: TrainingStack, tmp_path: Path
) -> None:
    stack = trained.stack
    log = tmp_path / "training.log"
    command = ["mpiexec", "python3", TRAIN_SCRIPT, "--epochs", "1000", "--checkpoint-dir", f"{CHECKPOINTS}/lost"]
    with log.open("w") as out:
        launcher = subprocess.Popen(exec_command(stack.kubectl, stack.namespace, stack.master, *command), stdout=out)

    def epochs_done() -> int:
        if launcher.poll() is not None:
            raise AssertionError(f"training ended before the fault (exit {launcher.returncode}):\n{log.read_text()}")
        return len(parse(log.read_text()).epochs) if "ranks on" in log.read_text() else 0

    wait_until("three epochs trained", lambda: epochs_done() >= 3, 180)
    fault = time.monotonic()
    stack.kubectl.run("delete", "pod", stack.worker(1), "-n", stack.namespace, "--wait=false")
    try:
        code = launcher.wait(timeout=EXIT_WITHIN)
    except subprocess.TimeoutExpired:
        launcher.kill()
        stack.stop_leftover_launchers()
        raise AssertionError(f"mpiexec still running {EXIT_WITHIN:.0f} s after the worker was deleted") from None
    seconds = time.monotonic() - fault
    reached = parse(log.read_text()).epochs[-1].number
    print(f"\nworker deleted after epoch {reached}: mpiexec exited {code} after {seconds:.1f} s")
    assert code != 0, log.read_text()

    stack.every_worker_ready()  # the StatefulSet made the worker again; the hostfile lists it
    resumed = train(stack, "--epochs", str(reached + 3), "--checkpoint-dir", f"{CHECKPOINTS}/lost")
    # the checkpoint of the last epoch printed, or of the one before (killed between the line and the file), or
    # of the one after (its line still on its way when mpiexec ended)
    assert resumed.resumed_after is not None and reached - 1 <= resumed.resumed_after <= reached + 1
    assert [epoch.number for epoch in resumed.epochs] == list(range(resumed.resumed_after + 1, reached + 4))
    assert resumed.final_line is not None


def epochs_printed(output: str) -> int:
    return len(parse(output).epochs) if "ranks on" in output else 0


def test_a_run_under_kompi_run_outlives_its_terminal_and_resumes_by_itself_after_a_lost_worker(
    trained: TrainingStack, tmp_path: Path
) -> None:
    """#46: the `kubectl exec` that started the run is killed (a laptop closed), then a worker is lost: the run
    goes on, starts again by itself from its checkpoint once the worker is back, and learns as an unbroken run."""
    stack, name = trained.stack, "resilient"
    checkpoints = f"{CHECKPOINTS}/{name}"
    train_args = ["--epochs", str(EPOCHS), "--checkpoint-dir", checkpoints, "--min-accuracy", str(MIN_ACCURACY)]
    start = ["kompi-run", "start", "--name", name, "--restarts", "2", "--", "mpiexec", "python3", TRAIN_SCRIPT]
    terminal_log = tmp_path / "terminal.log"
    with terminal_log.open("w") as out:
        terminal = subprocess.Popen(
            exec_command(stack.kubectl, stack.namespace, stack.master, *start, *train_args), stdout=out
        )

    def run_output() -> str:
        return exec_in(stack.kubectl, stack.namespace, stack.master, "kompi-run", "logs", name)

    try:
        wait_until("two epochs on the terminal", lambda: epochs_printed(terminal_log.read_text()) >= 2, 180)
    finally:
        terminal.kill()  # the terminal goes; the run must not
        terminal.wait()
    wait_until("three epochs in the run's own output", lambda: epochs_printed(run_output()) >= 3, 180)
    stack.kubectl.run("delete", "pod", stack.worker(1), "-n", stack.namespace, "--wait=false")
    waited = run_in(stack.kubectl, stack.namespace, stack.master, "kompi-run", "wait", name, timeout=600)
    output = run_output()
    expected = f"{name} succeeded, exit code 0: command succeeded after 1 restart"
    assert (waited.returncode, waited.stdout.strip()) == (0, expected), output[-4000:]
    first, second = output.split("kompi-run: restart 1 of 2 after exit code ", 1)
    reached, resumed = parse(first).epochs[-1].number, parse(second)
    print(f"\nworker deleted after epoch {reached}; resumed after epoch {resumed.resumed_after}: {resumed.final_line}")
    assert resumed.resumed_after is not None and reached - 1 <= resumed.resumed_after <= reached + 1
    assert [epoch.number for epoch in resumed.epochs] == list(range(resumed.resumed_after + 1, EPOCHS + 1))
    assert resumed.final_accuracy is not None and resumed.final_accuracy >= MIN_ACCURACY
    assert json.loads((trained.volume / name / "result.json").read_text())["epochs"] == EPOCHS


def test_one_shot_training_succeeds_and_releases_the_workers(
    training_cluster: LocalCluster, training_kubectl: Kubectl, training_image: str, tmp_path: Path
) -> None:
    name = "kompi-train-once"
    command = [
        "mpiexec",
        "python3",
        TRAIN_SCRIPT,
        "--epochs",
        str(EPOCHS),
        "--checkpoint-dir",
        f"{CHECKPOINTS}/once",
        "--min-accuracy",
        str(MIN_ACCURACY),
    ]
    project, volume = training_project(
        training_cluster,
        training_kubectl,
        training_image,
        tmp_path,
        name,
        oneShot={"enabled": True, "command": command, "timeoutSeconds": 300},
    )
    job = f"{name}-master"
    try:
        project.kompi("up")
        wait_until("the one-shot Job finished", lambda: job_finished(training_kubectl, name, job), 300)
        logs = training_kubectl.run("logs", "-n", name, f"job/{job}", "-c", "mpi").stdout
        assert training_kubectl.get("job", job, name)["status"].get("succeeded") == 1, logs  # type: ignore[index]
        run = parse(logs)
        assert run.final_accuracy is not None and run.final_accuracy >= MIN_ACCURACY, logs
        assert termination_message(job_pod(training_kubectl, name, job)).startswith("exit code 0:")
        assert json.loads((volume / "once" / "result.json").read_text())["epochs"] == EPOCHS
        wait_until(
            "workers released",
            lambda: not training_kubectl.items("pods", name, "app.kubernetes.io/component=worker"),
            120,
        )
        assert training_kubectl.get("statefulset", f"{name}-worker", name)["spec"]["replicas"] == 0  # type: ignore[index]
    finally:
        project.kompi("destroy", check=False)
        training_kubectl.run("delete", "pv", f"{name}-{os.getpid()}", "--wait=false", check=False)
