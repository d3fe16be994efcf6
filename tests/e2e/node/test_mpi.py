"""kompi on a real node: `kompi up` gives a cluster where mpiexec really runs across worker pods."""

from __future__ import annotations

import shlex
import subprocess

import pytest

from tests.e2e.live import Kubectl, pods_ready, wait_until
from tests.e2e.node.mpi import allreduce, exec_in
from tests.e2e.project import Project

LIBRARY = {"ompi4": "Open MPI v4.", "ompi5": "Open MPI v5."}


@pytest.mark.parametrize(
    ("flavor", "run_as_root"),
    [("ompi4", False), ("ompi5", False), ("ompi4", True), ("ompi5", True)],
    ids=["ompi4", "ompi5", "ompi4-root", "ompi5-root"],
)
def test_mpiexec_runs_across_the_worker_pods(
    node_project, node_kubectl: Kubectl, images: dict[str, str], flavor: str, run_as_root: bool
) -> None:
    project: Project = node_project("dev", images[flavor].split(":", 1)[1], runAsRoot=run_as_root)
    out = project.last_json(project.kompi("up"))
    namespace, master = project.config()["kompi:namespace"], out["masterPod"]
    wait_until("every pod Ready", lambda: pods_ready(node_kubectl, namespace), 120)

    reports = allreduce(node_kubectl, namespace, master, 2)
    assert LIBRARY[flavor] in reports[0]["library"]
    workers = {f"kompi-dev-worker-{index}" for index in range(2)}
    assert {report["hostname"] for report in reports} == workers  # one rank per worker pod
    uid = exec_in(node_kubectl, namespace, master, "id", "-u").strip()
    assert uid == ("0" if run_as_root else "1000")

    # the stack's own first-job command, verbatim (its kubectl is ours, pointed at this cluster)
    command = shlex.split(out["firstJob"])
    assert command[0] == "kubectl"
    result = subprocess.run(
        [str(node_kubectl.binary), "--kubeconfig", str(node_kubectl.kubeconfig), *command[1:]],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert sorted(result.stdout.split()) == sorted(workers)
