"""What the run client sends and reads, without a cluster: kompi-run's command lines, the environment of a
run's ranks, its status.json, the exec's exit status, and the errors a person reads."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from kompi_components.runs import BadRequest, ClusterUnreachable, RunFailed, RunsError, RunStatus
from kompi_components.runs.commands import launched, start
from kompi_components.runs.pod_exec import exit_code


def test_ranks_run_the_command_under_mpiexec_with_the_environment_passed_to_every_rank() -> None:
    assert launched(["python3", "train.py"], 4, {"SEED": "1", "DATA": "/d x"}) == [
        "env", "SEED=1", "DATA=/d x", "mpiexec", "-n", "4", "-x", "SEED", "-x", "DATA", "python3", "train.py",
    ]  # fmt: skip


def test_a_command_with_its_own_mpiexec_gets_the_exports_right_after_it() -> None:
    assert launched("/usr/local/bin/mpiexec -n 2 hostname", None, {"A": "1"}) == [
        "env", "A=1", "/usr/local/bin/mpiexec", "-x", "A", "-n", "2", "hostname",
    ]  # fmt: skip
    assert launched(["sh", "-c", "echo $A"], None, {"A": "1"}) == ["env", "A=1", "sh", "-c", "echo $A"]
    assert launched("mpiexec hostname", None, {}) == ["mpiexec", "hostname"]


@pytest.mark.parametrize(
    ("command", "ranks", "env", "message"),
    [
        ([], None, {}, "command: expected a program and its arguments, got nothing"),
        (["mpiexec", "hostname"], 2, {}, "ranks 2 and a command that starts with mpiexec: give the ranks one way"),
        (["true"], 0, {}, "ranks 0: expected a whole number >= 1"),
        (["true"], None, {"1A": "x"}, "env key '1A': expected letters, digits and '_', not starting with a digit"),
        (["true"], None, {"A": "x\0y"}, "env A: the value holds a NUL character, which no environment can carry"),
    ],
)
def test_a_command_the_client_cannot_start_is_refused_in_one_line(command, ranks, env, message) -> None:
    with pytest.raises(BadRequest) as refused:
        launched(command, ranks, env)
    assert str(refused.value) == message


def test_start_is_detached_and_checks_its_arguments_before_the_cluster_sees_them() -> None:
    assert start("digits", ["true"], restarts=3, workers=0) == [
        "kompi-run", "start", "--detach", "--name", "digits", "--restarts", "3", "--workers", "0", "--", "true",
    ]  # fmt: skip
    with pytest.raises(BadRequest, match=r"^restarts 101: expected a whole number from 0 to 100$"):
        start("digits", ["true"], restarts=101)
    with pytest.raises(BadRequest, match=r"^run name 'a b': expected letters, digits"):
        start("a b", ["true"])


STATUS = {
    "name": "digits", "command": ["mpiexec", "hostname"], "restarts": 1, "workers": 2, "state": "failed",
    "attempt": 1, "exit_code": 3, "reason": "command failed after 1 restart (--restarts 1, spent)", "pid": 12,
    "pid_started": "99", "started_at": 1700000000.5, "ended_at": 1700000060.0,
}  # fmt: skip


def test_a_status_json_reads_as_a_typed_status() -> None:
    status = RunStatus.from_json(STATUS | {"a_later_key": 1})  # keys of a newer kompi-run are ignored
    assert status.command == ("mpiexec", "hostname")
    assert (status.state, status.exit_code, status.finished, status.succeeded) == ("failed", 3, True, False)
    assert status.ended_at == datetime(2023, 11, 14, 22, 14, 20, tzinfo=UTC)
    assert status.describe() == "digits failed, exit code 3: command failed after 1 restart (--restarts 1, spent)"
    running = RunStatus.from_json(STATUS | {"state": "running", "exit_code": None, "ended_at": None})
    assert (running.finished, running.describe()) == (False, "digits running")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"state": "paused"}, "kompi-run status of digits: state 'paused' is none of starting, waiting, running"),
        ({"exit_code": "3"}, "kompi-run status of digits: exit_code '3': expected a whole number or null"),
        ({"attempt": None}, "kompi-run status of digits: attempt = None: expected int"),
    ],
)
def test_a_status_the_client_cannot_read_says_which_key(change, message) -> None:
    with pytest.raises(RunsError) as bad:
        RunStatus.from_json(STATUS | change)
    assert str(bad.value).startswith(message)
    without = dict(STATUS)
    del without["pid"]
    with pytest.raises(RunsError, match=r"no key 'pid' \(is the image's kompi-run older than this client\?\)"):
        RunStatus.from_json(without)


def test_a_failed_run_s_error_carries_its_exit_code_and_last_lines() -> None:
    failed = RunFailed(RunStatus.from_json(STATUS), ["step 10 loss 0.3", "Traceback ...", "ValueError: nan"])
    assert failed.exit_code == 3
    assert failed.last_lines[-1] == "ValueError: nan"
    assert str(failed).splitlines() == [
        "run digits failed, exit code 3: command failed after 1 restart (--restarts 1, spent)",
        "its last 3 lines:",
        "  step 10 loss 0.3",
        "  Traceback ...",
        "  ValueError: nan",
    ]


def test_the_exec_s_status_channel_gives_the_exit_code_or_why_the_command_did_not_run() -> None:
    assert exit_code(b'{"metadata":{},"status":"Success"}', "pod p") == 0
    failure = {
        "status": "Failure", "reason": "NonZeroExitCode", "message": "command terminated with non-zero exit code",
        "details": {"causes": [{"reason": "ExitCode", "message": "3"}]},
    }  # fmt: skip
    assert exit_code(json.dumps(failure).encode(), "pod p") == 3
    not_started = {"status": "Failure", "reason": "InternalError", "message": 'exec: "tar": not found\nmore'}
    with pytest.raises(ClusterUnreachable, match=r'^exec in pod p failed: exec: "tar": not found$'):
        exit_code(json.dumps(not_started), "pod p")
    with pytest.raises(ClusterUnreachable, match="ended without an exit status: the connection was lost"):
        exit_code(b"", "pod p")
