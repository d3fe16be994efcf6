"""images/scripts/kompi_run.py (kompi-run) on this machine's processes, no containers: a run outlives the
process that started it, restarts within its budget, stops with every process it started, and says when its
supervisor is gone. tests/images/test_mpi_cluster.py runs it with mpiexec across containers."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.images.podman import REPO_ROOT

SCRIPT = REPO_ROOT / "images" / "scripts" / "kompi_run.py"


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KOMPI_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("KOMPI_RESTART_DELAY", "0")
    monkeypatch.setenv("KOMPI_STOP_GRACE", "2")  # from SIGTERM to SIGKILL
    monkeypatch.setenv("KOMPI_HOSTFILE", str(tmp_path / "no-hostfile"))  # no workers to wait for
    return tmp_path / "runs"


def kompi_run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def status(name: str) -> dict[str, Any]:
    result = kompi_run("status", name, "--json")
    assert result.returncode == 0, result.stderr
    parsed: dict[str, Any] = json.loads(result.stdout)
    return parsed


def until(condition: Any, what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"


def test_a_run_goes_on_when_the_terminal_that_started_it_is_killed(runs: Path, tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    command = f"echo first; while [ ! -e {gate} ]; do sleep 0.05; done; echo second"
    starter = subprocess.Popen(
        [sys.executable, str(SCRIPT), "start", "--name", "detached", "--", "sh", "-c", command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # as `kubectl exec`: killed with its whole process group
    )
    try:
        assert starter.stdout is not None
        assert starter.stdout.readline().startswith("kompi-run: running: sh -c ")
        assert starter.stdout.readline() == "first\n"  # the follower copies the output as it is written
        os.killpg(starter.pid, signal.SIGKILL)
        starter.wait()
    finally:
        gate.touch()  # the run ends also when an assertion above failed
    finished = kompi_run("wait", "detached")
    assert finished.returncode == 0, finished
    assert finished.stdout.strip() == "detached succeeded, exit code 0: command succeeded"
    assert (runs / "detached" / "output.log").read_text().splitlines()[-2:] == [
        "second",
        "kompi-run: command succeeded: exit code 0",
    ]


def test_an_attached_start_exits_with_the_run_s_exit_code(runs: Path) -> None:
    result = kompi_run("start", "--name", "seven", "--", "sh", "-c", "echo out; echo err >&2; exit 7")
    assert result.returncode == 7
    assert result.stdout.splitlines() == [
        "kompi-run: running: sh -c 'echo out; echo err >&2; exit 7'",
        "out",
        "err",
        "kompi-run: command failed: exit code 7",
    ]
    found = status("seven")
    assert (found["state"], found["exit_code"], found["attempt"], found["reason"]) == ("failed", 7, 0, "command failed")


def counting_command(counter: Path, failures: int) -> list[str]:
    """Fails its first ``failures`` runs (exit 3), then succeeds: a script resuming from its checkpoint."""
    script = f'n=$(cat {counter} 2>/dev/null || echo 0); echo $((n + 1)) > {counter}; [ "$n" -ge {failures} ] || exit 3'
    return ["sh", "-c", script]


def test_a_failed_command_starts_again_within_its_budget(runs: Path, tmp_path: Path) -> None:
    result = kompi_run("start", "--name", "resumed", "--restarts", "3", "--", *counting_command(tmp_path / "n", 2))
    assert result.returncode == 0, result
    found = status("resumed")
    assert (found["state"], found["attempt"], found["exit_code"]) == ("succeeded", 2, 0)
    assert found["reason"] == "command succeeded after 2 restarts"
    log = (runs / "resumed" / "output.log").read_text()
    assert [line for line in log.splitlines() if "restart" in line][:2] == [
        "kompi-run: restart 1 of 3 after exit code 3",
        "kompi-run: restart 2 of 3 after exit code 3",
    ]


def test_a_spent_budget_fails_the_run_with_the_last_exit_code(runs: Path, tmp_path: Path) -> None:
    result = kompi_run("start", "--name", "spent", "--restarts", "1", "--", *counting_command(tmp_path / "n", 5))
    assert result.returncode == 3
    found = status("spent")
    assert (found["state"], found["attempt"]) == ("failed", 1)
    assert found["reason"] == "command failed after 1 restart (--restarts 1, spent)"
    assert (tmp_path / "n").read_text() == "2\n"  # two attempts, no third


def fake_kompi_wait(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exits: str) -> Path:
    """kompi-wait on PATH that records its arguments and exits with the next of ``exits`` (one per call)."""
    tools, calls = tmp_path / "bin", tmp_path / "calls"
    tools.mkdir()
    script = f'#!/bin/sh\necho "$@" >> {calls}\nn=$(wc -l < {calls})\nexit $(echo {exits} | cut -d" " -f"$n")\n'
    (tools / "kompi-wait").write_text(script)
    (tools / "kompi-wait").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}:{os.environ['PATH']}")
    hostfile = tmp_path / "hostfile"
    hostfile.write_text(
        f"c-worker-0.c.ns.svc slots=1\nc-worker-1.c.ns.svc slots=1\n{socket.gethostname()}.c.ns.svc slots=1\n"
    )
    monkeypatch.setenv("KOMPI_HOSTFILE", str(hostfile))
    return calls


def test_each_attempt_first_waits_for_the_workers_of_the_hostfile(
    runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = fake_kompi_wait(tmp_path, monkeypatch, "0 0")
    result = kompi_run("start", "--name", "waits", "--restarts", "1", "--", *counting_command(tmp_path / "n", 1))
    assert result.returncode == 0, result
    assert calls.read_text().splitlines() == ["2 --timeout 600"] * 2  # the master's own line is no worker


def test_workers_that_do_not_come_back_fail_the_run(
    runs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_kompi_wait(tmp_path, monkeypatch, "0 1")
    result = kompi_run("start", "--name", "gone", "--restarts", "3", "--", *counting_command(tmp_path / "n", 5))
    assert result.returncode == 1
    found = status("gone")
    assert (found["state"], found["reason"]) == ("failed", "workers not ready to restart after exit code 3")


def test_stop_ends_every_process_of_the_run(runs: Path, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    # a launcher with a child of its own, as mpiexec with its ranks; the child ignores SIGTERM
    command = f"(trap '' TERM; sleep 300) & echo $! > {pids}; echo $$ >> {pids}; wait"
    started = kompi_run("start", "--name", "long", "--detach", "--", "sh", "-c", command)
    assert started.returncode == 0, started
    until(lambda: pids.exists() and len(pids.read_text().split()) == 2, "the run's processes")
    processes = [int(pid) for pid in pids.read_text().split()]
    assert all(alive(pid) for pid in processes)
    stopped = kompi_run("stop", "long", timeout=60)
    assert stopped.returncode == 0, stopped
    assert stopped.stdout.startswith("long stopped, exit code ")
    assert not any(alive(pid) for pid in processes)  # SIGTERM, then SIGKILL for the one that ignored it
    assert status("long")["state"] == "stopped"


def test_a_run_whose_supervisor_is_gone_says_so(runs: Path, tmp_path: Path) -> None:
    pid = tmp_path / "pid"
    kompi_run("start", "--name", "orphan", "--detach", "--", "sh", "-c", f"echo $$ > {pid}; exec sleep 300")
    until(lambda: status("orphan")["state"] == "running" and pid.exists(), "the run to start")
    os.kill(status("orphan")["pid"], signal.SIGKILL)  # as a container restart does
    until(lambda: status("orphan")["state"] == "lost", "the lost state")
    waited = kompi_run("wait", "orphan")
    assert waited.returncode == 1
    assert (
        waited.stdout.strip() == "orphan lost: its supervisor is gone (the pod or container restarted); start it again"
    )
    os.kill(int(pid.read_text()), signal.SIGKILL)


def test_the_table_lists_every_run(runs: Path) -> None:
    kompi_run("start", "--name", "a", "--", "true")
    kompi_run("start", "--name", "b", "--restarts", "2", "--", "false")
    lines = kompi_run("status").stdout.splitlines()
    assert [line.split()[:4] for line in lines[1:]] == [["a", "succeeded", "0/0", "0"], ["b", "failed", "2/2", "1"]]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["status", "nothing"], "kompi-run: no run 'nothing' in "),
        (["start", "--name", "../up", "--", "true"], "kompi-run: run name '../up': expected letters"),
        (["start", "--name", "x"], "kompi-run: no command given"),
        (["start", "--restarts", "101", "--", "true"], "'101': expected a whole number from 0 to 100"),
    ],
)
def test_bad_input_gets_one_line(runs: Path, args: list[str], expected: str) -> None:
    result = kompi_run(*args)
    assert result.returncode == 2
    assert expected in result.stderr and "Traceback" not in result.stderr


def test_a_name_is_taken_once(runs: Path) -> None:
    assert kompi_run("start", "--name", "once", "--", "true").returncode == 0
    again = kompi_run("start", "--name", "once", "--", "true")
    assert again.returncode == 2 and "exists already" in again.stderr
