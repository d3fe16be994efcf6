"""The run client (kompi_components.runs, #47) against a real cluster: kompi-run in the master, reached through
the Kubernetes API's exec as a notebook or a script reaches it, with the stack's outputs and a kubeconfig."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kompi_components.runs import RunClient, RunFailed, RunTimeout
from kompi_engine.cluster.local import LocalCluster
from tests.e2e.live import Kubectl, wait_until
from tests.e2e.project import Project
from tests.stacks import REPO


def ranks_left(kubectl: Kubectl, namespace: str, pod: str) -> int:
    """The processes of the pod's MPI container whose command line is `sleep 600` (the long run's ranks)."""
    look = "for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f; echo; done | grep -c '^sleep 600 $' || true"
    result = kubectl.run("exec", "-n", namespace, pod, "-c", "mpi", "--", "sh", "-c", look)
    return int(result.stdout.strip() or 0)


def test_runs_through_the_client_on_a_real_cluster(
    real_cluster: LocalCluster, node_project, node_kubectl: Kubectl, images, tmp_path: Path
) -> None:
    project: Project = node_project("dev", images["ompi4"].split(":", 1)[1])
    outputs = project.last_json(project.kompi("up"))
    namespace, workers = outputs["namespace"], ["kompi-dev-worker-0", "kompi-dev-worker-1"]
    runs = RunClient.from_outputs(outputs, real_cluster.kubeconfig)

    # a detached run over both workers, its environment passed to every rank, followed as it is written
    started = runs.start(["sh", "-c", "echo rank on $(hostname) $KOMPI_TEST_RUN"], name="hosts", ranks=2,
                         env={"KOMPI_TEST_RUN": "e2e"})  # fmt: skip
    assert started.command[:7] == ("env", "KOMPI_TEST_RUN=e2e", "mpiexec", "-n", "2", "-x", "KOMPI_TEST_RUN")
    assert "hosts" in [run.name for run in runs.runs()]
    followed = "".join(runs.follow("hosts"))
    ranks = sorted(line for line in followed.splitlines() if line.startswith("rank on "))
    assert ranks == [f"rank on {worker} e2e" for worker in workers], followed
    done = runs.wait("hosts", timeout=120)
    assert (done.state, done.exit_code) == ("succeeded", 0)
    # files of the master: one read, one directory copied (its record)
    record = json.loads(runs.read_file("/kompi/generated/runs/hosts/status.json"))
    assert (record["state"], record["exit_code"]) == ("succeeded", 0)
    copied = runs.copy_from("/kompi/generated/runs/hosts", tmp_path)
    assert (copied / "output.log").read_text() == followed

    # a failing run: its exit code and last lines, not a traceback of the API
    runs.start(["sh", "-c", "echo before-failure; exit 3"], name="fails", workers=0)
    with pytest.raises(RunFailed) as failed:
        runs.wait("fails", timeout=120)
    assert failed.value.exit_code == 3
    assert failed.value.last_lines[-2:] == ["before-failure", "kompi-run: command failed: exit code 3"]

    # a long run over both workers: wait gives up, the run goes on; stop ends mpiexec and every rank
    runs.start(["sleep", "600"], name="long", ranks=2)
    wait_until("the long run's ranks", lambda: all(ranks_left(node_kubectl, namespace, w) for w in workers), 120)
    with pytest.raises(RunTimeout, match=r"^run long still running after 1 s; it goes on$"):
        runs.wait("long", timeout=1)
    stopped = runs.stop("long")
    assert stopped.state == "stopped" and stopped.exit_code is not None
    wait_until("no rank left", lambda: not any(ranks_left(node_kubectl, namespace, w) for w in workers), 60)

    # the same runs from a terminal: `kompi run list` with the outputs and the kubeconfig
    (tmp_path / "outputs.json").write_text(json.dumps(outputs))
    command = [sys.executable, "-m", "kompi_components", "run", "list", "--outputs", str(tmp_path / "outputs.json")]
    listed = subprocess.run([*command, "--kubeconfig", str(real_cluster.kubeconfig)], cwd=REPO,
                            capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    assert [line.split()[:2] for line in listed.stdout.splitlines()[1:]] == [
        ["fails", "failed"], ["hosts", "succeeded"], ["long", "stopped"],
    ]  # fmt: skip
