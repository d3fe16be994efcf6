"""Ctrl-C or SIGTERM on `bin/kompi up --local` that started the local cluster itself: the operation is
cancelled through the Pulumi CLI (exit 1, state saved, no provider plugin left), also while the program's
rollout step waits, the cluster's daemons - kompi's children too - keep running and answering, and the
next `up` finishes the job."""

from __future__ import annotations

import fcntl
import os
import pty
import signal
import subprocess
import sys
import termios
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path

import pytest

from kompi_engine.cluster.local import LocalCluster
from tests.e2e.live import Kubectl, pods_ready, provider_plugins, run_command, wait_until
from tests.e2e.port_blocks import PortBlock
from tests.e2e.project import Project, started_by_up_local
from tests.stacks import REPO

BLOCK = PortBlock.SIGNALS
MASTER, NAMESPACE = "kompi-dev-master-0", "kompi-dev"


@pytest.fixture
def local(engine_bin: Path, tmp_path: Path) -> Iterator[tuple[LocalCluster, Project]]:
    """The cluster `up --local` will start (in a state directory of the test's, on its own ports), and a
    dev stack whose `up` waits: its master asks for a node that does not exist."""
    with started_by_up_local(engine_bin, tmp_path, BLOCK) as (cluster, project):
        project.set(masterPod={"nodeSelector": {"kompi-test": "no-such-node"}})
        try:
            yield cluster, project
        finally:
            for orphan in provider_plugins(project.directory):  # only after a failure: kompi was killed
                with suppress(ProcessLookupError):
                    os.kill(orphan, signal.SIGKILL)


def start_at_a_terminal(project: Project) -> tuple[subprocess.Popen[str], int]:
    """`up --local` as typed at a terminal: a session whose controlling terminal is a pty, so that a Ctrl-C
    there reaches every process of its foreground group (kompi and the CLI it runs)."""
    controller, terminal = pty.openpty()

    def take_the_terminal() -> None:
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    running = subprocess.Popen(
        project.command("up", "--local", "--node", "kwok"),
        cwd=REPO,
        env=project.env,
        stdin=terminal,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=take_the_terminal,
    )
    os.close(terminal)
    return running, controller


@pytest.mark.parametrize("how", ["SIGTERM", "SIGINT", "Ctrl-C at the terminal"])
def test_a_signal_cancels_up_local_and_the_cluster_it_started_keeps_running(
    how: str, local: tuple[LocalCluster, Project]
) -> None:
    cluster, project = local
    kubectl = Kubectl(cluster.bin / "kubectl", cluster.kubeconfig)
    at_a_terminal = how == "Ctrl-C at the terminal"
    running, controller = (
        start_at_a_terminal(project) if at_a_terminal else (project.start("up", "--local", "--node", "kwok"), None)
    )

    def waiting_for_the_master() -> bool:
        assert running.poll() is None, f"kompi up exited {running.returncode}:\n{running.communicate()[1]}"
        return cluster.kubeconfig.exists() and kubectl.get("pod", MASTER, NAMESPACE) is not None

    try:
        wait_until("up --local to start the cluster and wait for the master", waiting_for_the_master, 300)
        if at_a_terminal:
            os.killpg(running.pid, signal.SIGINT)  # what the terminal does on Ctrl-C
        else:
            running.send_signal(signal.Signals[how])  # kompi alone, as `kill` or a CI runner sends it
        _, stderr = running.communicate(timeout=120)
    finally:
        if running.poll() is None:
            os.killpg(running.pid, signal.SIGKILL)
        if controller is not None:
            os.close(controller)

    assert running.returncode == 1, stderr[-3000:]
    assert stderr.strip().splitlines()[-1] == (
        f"error: up cancelled by {'SIGINT' if at_a_terminal else how}; its state is saved: "
        "`bin/kompi up --stack dev --local` finishes it"
    )
    status = cluster.status()
    assert status and all(status.values()), f"not every process of the local cluster runs: {status}"
    assert kubectl.run("get", "--raw", "/readyz").stdout == "ok"
    wait_until("the provider plugins to exit", lambda: not provider_plugins(project.directory), 30)

    project.set(masterPod={})
    finished = project.kompi("up", "--local", "--node", "kwok", timeout=240)
    assert project.last_json(finished)["masterPod"] == MASTER
    assert (
        "this local cluster's nodes are kwok's: pods become Ready but run no container, so firstJob" in finished.stderr
    )
    wait_until("the pods Ready", lambda: pods_ready(kubectl, NAMESPACE), 90)
    # the README's commands need no kubectl of one's own
    command = [sys.executable, "-m", "kompi_engine", "kubectl", "-n", NAMESPACE, "get", "pod", MASTER, "-o", "name"]
    listed = run_command("bin/kompi kubectl", command, cwd=REPO, env=project.env, timeout=60, check=True, tail=2000)
    assert listed.stdout.strip() == f"pod/{MASTER}"
