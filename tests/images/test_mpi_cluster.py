"""Real MPI jobs across real containers: 3 workers + master rendered by kompi, on Open MPI 4 and 5.

mpiexec runs on the master as the pod's user with no flags at all: the hostfile location, FQDN
handling, ssh port and interface come from the image's MCA defaults. Every rank must land on its own
worker (Open MPI 5 ignoring ORTE names would put them all on the launcher and still succeed).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.images.cluster import RunningCluster, render_cluster, running_cluster, write_hostfile
from tests.images.conftest import TEST_CODE_DIR
from tests.images.podman import exec_in

pytestmark = pytest.mark.containers
WORKERS = 3


def run_allreduce(cluster: RunningCluster) -> list[dict[str, object]]:
    result = exec_in(cluster.master, ["mpiexec", "python3", f"{TEST_CODE_DIR}/allreduce.py"], timeout=180)
    assert result.returncode == 0, f"mpiexec failed:\n{result.stdout}\n{result.stderr}"
    reports = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    print(f"\nmpiexec stderr: {result.stderr.strip()[:2000]}")
    return sorted(reports, key=lambda report: int(report["rank"]))  # type: ignore[call-overload]


@pytest.mark.parametrize("run_as_root", [False, True], ids=["uid1000", "root"])
@pytest.mark.parametrize("flavor", ["ompi4", "ompi5"])
def test_allreduce_runs_one_rank_per_worker(
    images: dict[str, str], flavor: str, run_as_root: bool, tmp_path: Path, test_code: str
) -> None:
    rendered = render_cluster(images[flavor], workers=WORKERS, run_as_root=run_as_root)
    with running_cluster(rendered, tmp_path, extra_mounts=[test_code]) as cluster:
        user = exec_in(cluster.master, ["id", "-u"]).stdout.strip()
        assert user == ("0" if run_as_root else "1000")
        write_hostfile(cluster)
        reports = run_allreduce(cluster)
    print(f"ready in {cluster.ready_seconds:.1f}s; rank 0: {reports[0]}")
    assert [report["rank"] for report in reports] == list(range(WORKERS))
    assert {report["size"] for report in reports} == {WORKERS}
    assert {report["sum"] for report in reports} == {WORKERS * (WORKERS + 1) // 2}
    assert [report["hostname"] for report in reports] == [pod.name for pod in rendered.workers]
    assert [report["fqdn"] for report in reports] == [pod.fqdn for pod in rendered.workers]
    # The pod's env reaches the ranks through sshd (SetEnv): the workers' role, the image's PATH.
    assert {report["role"] for report in reports} == {"worker"}
    assert all(str(report["path"]).startswith("/usr/local/sbin:") for report in reports)
    expected_major = {"ompi4": "Open MPI v4.1", "ompi5": "Open MPI v5.0"}[flavor]
    assert str(reports[0]["library"]).startswith(expected_major)


SHORT_JOBS = 40


def test_back_to_back_short_jobs_all_finish_on_open_mpi_5(images: dict[str, str], tmp_path: Path) -> None:
    """A job whose ranks exit at once must end: PRRTE 3.0's daemons fork ranks on worker threads and
    could reap a rank before recording its pid, losing its exit, so `mpiexec` hung after the job's
    output (about one `mpiexec hostname` in eight here). The image spawns on the daemon's own thread.
    The state machine's verbose output widens that window, so the test fails reliably without it."""
    rendered = render_cluster(images["ompi5"], workers=WORKERS, run_as_root=False)
    with running_cluster(rendered, tmp_path) as cluster:
        write_hostfile(cluster)
        for attempt in range(SHORT_JOBS):
            command = ["timeout", "20", "mpiexec", "--prtemca", "state_base_verbose", "5", "hostname"]
            result = exec_in(cluster.master, command, timeout=60)
            assert result.returncode == 0, f"job {attempt + 1} of {SHORT_JOBS} did not end (rc {result.returncode})"
            assert sorted(result.stdout.split()) == sorted(pod.name for pod in rendered.workers)


def count_processes(container: str, name: str) -> int:
    """How many processes named ``name`` the container runs (its image has no pgrep)."""
    result = exec_in(container, ["sh", "-c", f"cat /proc/[0-9]*/comm 2>/dev/null | grep -cx {name}"])
    return int(result.stdout)


def test_a_detached_run_outlives_its_terminal_and_stop_ends_its_ranks_on_every_worker(
    images: dict[str, str], tmp_path: Path
) -> None:
    """kompi-run (#46): the `kubectl exec` that started mpiexec is killed and the job still ends with every
    rank's output and exit 0 recorded; `kompi-run stop` ends the ranks on the workers too, not only mpiexec."""
    rendered = render_cluster(images["ompi5"], workers=WORKERS, run_as_root=False)
    with running_cluster(rendered, tmp_path) as cluster:
        write_hostfile(cluster)
        workers = [cluster.container(pod.name) for pod in rendered.workers]
        run = [
            "kompi-run",
            "start",
            "--name",
            "hosts",
            "--workers",
            "0",
            "--",
            "mpiexec",
            "sh",
            "-c",
            "sleep 3; hostname",
        ]
        killed = exec_in(cluster.master, ["timeout", "-s", "KILL", "1", *run])
        assert killed.returncode == 137, killed  # the starter (the terminal's side) killed mid-run
        waited = exec_in(cluster.master, ["kompi-run", "wait", "hosts", "--timeout", "120"])
        assert (waited.returncode, waited.stdout.strip()) == (0, "hosts succeeded, exit code 0: command succeeded")
        output = exec_in(cluster.master, ["kompi-run", "logs", "hosts"]).stdout.splitlines()
        # every worker's rank printed its name once (the log holds the launcher's stderr too: PRRTE may warn there)
        names = sorted(pod.name for pod in rendered.workers)
        assert sorted(line for line in output if line in names) == names, output

        exec_in(
            cluster.master,
            ["kompi-run", "start", "--name", "long", "--workers", "0", "--detach", "--", "mpiexec", "sleep", "600"],
        )
        deadline = time.monotonic() + 60
        while [count_processes(worker, "sleep") for worker in workers] != [1] * WORKERS:
            assert time.monotonic() < deadline, "the ranks did not start"
            time.sleep(0.5)
        stopped = exec_in(cluster.master, ["kompi-run", "stop", "long"], timeout=60)
        assert stopped.returncode == 0 and stopped.stdout.startswith("long stopped, exit code "), stopped
        deadline = time.monotonic() + 30
        while any(count_processes(worker, "sleep") for worker in workers):
            assert time.monotonic() < deadline, "a rank outlived kompi-run stop"
            time.sleep(0.5)
