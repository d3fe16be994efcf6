"""images/scripts/kompi_prterun.py, the Open MPI 5 image's prterun, against a stand-in launcher (no containers).

It must be invisible except in one case: PRRTE printed that it lost a daemon and exited 0, which it
then turns into 205. Exit codes, signals, stdin, stdout and stderr pass through unchanged.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.images.podman import REPO_ROOT

WRAPPER = REPO_ROOT / "images" / "scripts" / "kompi_prterun.py"
LOST = """--------------------------------------------------------------------------
PRTE has lost communication with a remote daemon.

  HNP daemon   : [prterun-master-0-45@0,0] on node master-0
  Remote daemon: [prterun-master-0-45@0,2] on node worker-1
--------------------------------------------------------------------------
"""
LAUNCHER = """#!/bin/bash
case $1 in
  lost) printf '%s' "$LOST" >&2; printf ' ' >&2; exit 0 ;;
  lost-then-fail) printf '%s' "$LOST" >&2; exit 255 ;;
  exit) exit "$2" ;;
  echo) cat; echo "to stderr" >&2 ;;
  term) trap 'echo "got TERM" >&2; exit 9' TERM; echo ready; sleep 30 >/dev/null 2>&1 & wait ;;
  killed) kill -KILL $$ ;;
  leave) sleep 30 >/dev/null & exit 4 ;;
esac
"""


@pytest.fixture
def launcher(tmp_path: Path) -> dict[str, str]:
    fake = tmp_path / "prterun"
    fake.write_text(LAUNCHER)
    fake.chmod(0o755)
    return {**os.environ, "KOMPI_PRTERUN": str(fake), "LOST": LOST}


def run(env: dict[str, str], *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(WRAPPER), *args], env=env, input=stdin, capture_output=True, text=True, timeout=30
    )


def test_a_lost_daemon_with_exit_0_becomes_205(launcher: dict[str, str]) -> None:
    result = run(launcher, "lost")
    assert result.returncode == 205
    assert result.stderr.startswith(LOST)  # PRRTE's own message, unchanged, and then kompi's line
    assert result.stderr.endswith("\nkompi: the launcher lost a daemon but exited 0 (PRRTE 3.0); exiting 205\n")


def test_a_non_zero_exit_is_kept_as_it_is(launcher: dict[str, str]) -> None:
    assert run(launcher, "lost-then-fail").returncode == 255
    assert run(launcher, "exit", "3").returncode == 3
    assert run(launcher, "exit", "0").returncode == 0


def test_stdin_stdout_and_stderr_pass_through(launcher: dict[str, str]) -> None:
    result = run(launcher, "echo", stdin="hello\n" * 10000)
    assert (result.returncode, result.stdout, result.stderr) == (0, "hello\n" * 10000, "to stderr\n")


def test_a_signal_sent_to_it_reaches_the_launcher(launcher: dict[str, str]) -> None:
    wrapper = subprocess.Popen(
        [sys.executable, str(WRAPPER), "term"], env=launcher, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    # the launcher sets its trap before it prints, and the wrapper blocks what it forwards from its start
    assert wrapper.stdout is not None and wrapper.stdout.readline() == "ready\n"
    wrapper.send_signal(signal.SIGTERM)
    _, stderr = wrapper.communicate(timeout=10)
    assert (wrapper.returncode, stderr) == (9, "got TERM\n")


def test_a_launcher_killed_by_a_signal_kills_it_the_same_way(launcher: dict[str, str]) -> None:
    assert run(launcher, "killed").returncode == -signal.SIGKILL


def test_a_process_left_holding_its_stderr_does_not_hold_it(launcher: dict[str, str]) -> None:
    """PRRTE can leave an ssh session behind: the wrapper ends with the launcher, not with them."""
    start = time.monotonic()
    assert run(launcher, "leave").returncode == 4
    assert time.monotonic() - start < 5
