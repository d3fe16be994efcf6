"""Running MPI jobs on the real node from the test: kubectl exec into the master, as a user does."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path
from typing import Any

from tests.e2e.live import Kubectl

# The MPI program the tests ship: passed to `python3 -c`, so no pod needs a copy of it.
PROGRAM = (Path(__file__).parents[2] / "images" / "allreduce.py").read_text()


def exec_command(kubectl: Kubectl, namespace: str, pod: str, *command: str) -> list[str]:
    """The `kubectl exec` command line that runs ``command`` in the pod's MPI container."""
    kubectl_exec = [str(kubectl.binary), "--kubeconfig", str(kubectl.kubeconfig), "exec", "-n", namespace, pod]
    return [*kubectl_exec, "-c", "mpi", "--", *command]


def run_in(
    kubectl: Kubectl, namespace: str, pod: str, *command: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``command`` in the pod's MPI container through `kubectl exec`, as a user runs it."""
    return subprocess.run(
        exec_command(kubectl, namespace, pod, *command), capture_output=True, text=True, timeout=timeout, check=False
    )


def exec_in(kubectl: Kubectl, namespace: str, pod: str, *command: str, timeout: float = 120) -> str:
    result = run_in(kubectl, namespace, pod, *command, timeout=timeout)
    assert result.returncode == 0, f"{shlex.join(command)[:200]} in {pod} exited {result.returncode}: {result.stderr}"
    return result.stdout


def allreduce(kubectl: Kubectl, namespace: str, master: str, ranks: int) -> list[dict[str, Any]]:
    """The shipped program over ``ranks`` ranks; one JSON report per rank, checked for the known sum.

    The image's MCA settings must draw no warning (Open MPI 5 warns on every rank about a deprecated name)."""
    result = run_in(kubectl, namespace, master, "mpiexec", "-n", str(ranks), "python3", "-c", PROGRAM)
    assert result.returncode == 0, f"mpiexec in {master} exited {result.returncode}: {result.stderr}"
    assert "MCA variable" not in result.stderr, result.stderr
    stdout = result.stdout
    reports = sorted(
        (json.loads(line) for line in stdout.splitlines() if line.startswith("{")), key=lambda r: r["rank"]
    )
    assert [r["rank"] for r in reports] == list(range(ranks)), stdout
    assert {r["sum"] for r in reports} == {ranks * (ranks + 1) // 2}
    return reports


def hostfile_hosts(kubectl: Kubectl, namespace: str, master: str) -> list[str]:
    text = exec_in(kubectl, namespace, master, "sh", "-c", 'cat "$KOMPI_HOSTFILE"')
    return [line.split()[0] for line in text.splitlines() if line.strip() and not line.startswith("#")]
