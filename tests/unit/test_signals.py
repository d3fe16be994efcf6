"""Cancelling `kompi up` interrupts the Pulumi CLI alone, not the other processes kompi started (the local
cluster's daemons under `up --local`, kubectl calls), and stops the CLI's Python dynamic provider, which
ignores the CLI's cancel."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from kompi_engine.operation.automation import _command_line, interrupt_cli, is_dynamic_provider, is_pulumi_cli
from tests.e2e.live import wait_until

# A stand-in CLI that says when SIGINT reaches it (a shell keeps its script's path in its argv), with a
# stand-in dynamic provider as its child: a Python whose command line ends in `-m pulumi.dynamic ADDRESS`.
FAKE_CLI = """#!/bin/sh
trap 'echo interrupted > "$0.signalled"; exit 0' INT
"$PROVIDER_PYTHON" -c 'import time; time.sleep(60)' -m pulumi.dynamic 127.0.0.1:1 &
echo $! > "$0.pid" && mv "$0.pid" "$0.provider"
while :; do sleep 0.05; done
"""
# Another process kompi started: it notes each SIGINT and SIGUSR1 it gets in the file named by its argument,
# once its traps are set.
RECORDER = """trap 'echo INT >> "$0"' INT
trap 'echo USR1 >> "$0"' USR1
echo READY >> "$0"
while :; do sleep 0.05; done
"""


def _signals_noted(record: Path) -> list[str]:
    return record.read_text().split() if record.exists() else []


def _default_sigint() -> None:
    # SIGINT as a terminal leaves it: a shell started with SIGINT ignored (a CI job run in the background of
    # another shell) may not trap it (the real CLI, in Go, installs its own handler)
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_the_cli_is_pulumi_run_by_the_automation_api() -> None:
    assert is_pulumi_cli(["pulumi", "--non-interactive", "up", "--yes"])
    assert is_pulumi_cli(["/root/.cache/kompi/engine/x/bin/pulumi", "--non-interactive", "preview"])
    assert is_pulumi_cli(["/bin/sh", "/opt/bin/pulumi", "--non-interactive", "up"])  # a wrapper script
    assert not is_pulumi_cli(["pulumi", "up"])  # not the Automation API's (a user's own, say)
    assert not is_pulumi_cli(["/bin/etcd", "--name=local"])
    assert not is_pulumi_cli(["kubectl", "get", "--raw", "/readyz"])
    assert not is_pulumi_cli(["--non-interactive"])
    assert not is_pulumi_cli([])


def test_the_dynamic_provider_is_the_python_of_pulumi_dynamic() -> None:
    assert is_dynamic_provider(["/venv/bin/python", "-u", "-m", "pulumi.dynamic", "127.0.0.1:4000"])
    assert is_dynamic_provider(["/bin/sh", "/x/bin/pulumi-resource-pulumi-python", "127.0.0.1:4000"])
    assert not is_dynamic_provider(["/x/bin/pulumi-resource-kubernetes", "127.0.0.1:4000"])
    assert not is_dynamic_provider(["python", "-m", "pytest", "pulumi.dynamic"])


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


@pytest.mark.parametrize("cli_signalled", [False, True])
def test_interrupt_reaches_the_cli_and_its_dynamic_provider_and_no_other_child(
    tmp_path: Path, cli_signalled: bool
) -> None:
    cli = tmp_path / "pulumi"
    cli.write_text(FAKE_CLI)
    cli.chmod(0o755)
    running = subprocess.Popen(
        [str(cli), "--non-interactive", "up"],
        env=os.environ | {"PROVIDER_PYTHON": sys.executable},
        preexec_fn=_default_sigint,
    )
    # a daemon as the local cluster starts it (its own session), and a kubectl-like call in kompi's group
    records = {name: tmp_path / f"{name}.signals" for name in ("daemon", "call")}
    daemon = subprocess.Popen(
        ["sh", "-c", RECORDER, records["daemon"]], start_new_session=True, preexec_fn=_default_sigint
    )
    call = subprocess.Popen(["sh", "-c", RECORDER, records["call"]], preexec_fn=_default_sigint)
    try:
        for record in records.values():
            wait_until("a recorder's traps", lambda r=record: _signals_noted(r) == ["READY"], 10)
        wait_until("the fake CLI's provider", lambda: Path(f"{cli}.provider").exists(), 10)
        provider = int(Path(f"{cli}.provider").read_text())
        wait_until("it to exec Python", lambda: is_dynamic_provider(_command_line(provider)), 10)
        interrupt_cli(cli_signalled=cli_signalled)  # signalled: a Ctrl-C at the terminal reached it already
        wait_until("the dynamic provider stopped", lambda: _gone(provider), 10)
        if cli_signalled:
            assert running.poll() is None and not Path(f"{cli}.signalled").exists()  # no second SIGINT
        else:
            assert running.wait(10) == 0
            assert Path(f"{cli}.signalled").read_text() == "interrupted\n"
        # A SIGINT sent to them comes before the SIGUSR1 sent now (Linux delivers the lower signal first), so
        # once each notes this SIGUSR1, any SIGINT it was sent is noted too.
        for process, record in ((daemon, records["daemon"]), (call, records["call"])):
            process.send_signal(signal.SIGUSR1)
            wait_until("the recorder's SIGUSR1", lambda r=record: "USR1" in _signals_noted(r), 10)
            assert _signals_noted(record) == ["READY", "USR1"]
        assert daemon.poll() is None and call.poll() is None
    finally:
        for process in (running, daemon, call):
            process.kill()
            process.wait()
