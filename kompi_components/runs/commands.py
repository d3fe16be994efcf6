"""The kompi-run command lines the client sends (images/scripts/kompi_run.py), built and checked here so that
bad input fails before anything reaches the cluster."""

from __future__ import annotations

import re
import shlex
import time
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath

from kompi_components.runs.errors import BadRequest

PROGRAM = "kompi-run"
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")  # kompi-run's own rule for run names
ENV_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
LAUNCHERS = ("mpiexec", "mpirun")
MAX_RESTARTS = 100


def run_name(name: str) -> str:
    if not NAME.fullmatch(name):
        raise BadRequest(
            f"run name {name!r}: expected letters, digits, '.', '_' or '-' (a letter or digit first), at most 63"
        )
    return name


def default_name() -> str:
    """kompi-run's own default: run-DATE-TIME (the client names the run itself, to read its status back)."""
    return time.strftime("run-%Y%m%d-%H%M%S")


def launched(command: str | Sequence[str], ranks: int | None, env: Mapping[str, str]) -> list[str]:
    """The command as the run starts it.

    ``ranks``: the command runs as ``mpiexec -n RANKS COMMAND`` (the hostfile places the ranks). ``env``: set for
    the launcher by ``env K=V`` in front, and passed to every rank by mpiexec's ``-x K`` (the ranks on the workers
    start from sshd, not from this environment); ``-x`` goes right after ``mpiexec`` whether the client adds it
    (``ranks``) or the command starts with its own. A string command is split into words as a shell would, with
    no shell features (pipes, redirections: ``["sh", "-c", "..."]``)."""
    words = shlex.split(command) if isinstance(command, str) else list(command)
    if not words:
        raise BadRequest("command: expected a program and its arguments, got nothing")
    if not all(isinstance(word, str) for word in words):
        raise BadRequest(f"command {words!r}: expected strings")
    for key, value in env.items():
        if not ENV_KEY.fullmatch(key):
            raise BadRequest(f"env key {key!r}: expected letters, digits and '_', not starting with a digit")
        if "\0" in value:
            raise BadRequest(f"env {key}: the value holds a NUL character, which no environment can carry")
    own_launcher = PurePosixPath(words[0]).name in LAUNCHERS
    exported = [word for key in env for word in ("-x", key)]
    if ranks is not None:
        if isinstance(ranks, bool) or not isinstance(ranks, int) or ranks < 1:
            raise BadRequest(f"ranks {ranks!r}: expected a whole number >= 1")
        if own_launcher:
            raise BadRequest(f"ranks {ranks} and a command that starts with {words[0]}: give the ranks one way")
        words = ["mpiexec", "-n", str(ranks), *exported, *words]
    elif own_launcher:
        words = [words[0], *exported, *words[1:]]
    if env:
        words = ["env", *(f"{key}={value}" for key, value in env.items()), *words]
    return words


def start(
    name: str,
    command: str | Sequence[str],
    ranks: int | None = None,
    env: Mapping[str, str] | None = None,
    restarts: int = 0,
    workers: int | None = None,
) -> list[str]:
    """``kompi-run start --detach``: the run goes on after the exec that started it ends."""
    if isinstance(restarts, bool) or not isinstance(restarts, int) or not 0 <= restarts <= MAX_RESTARTS:
        raise BadRequest(f"restarts {restarts!r}: expected a whole number from 0 to {MAX_RESTARTS}")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 0):
        raise BadRequest(f"workers {workers!r}: expected a whole number >= 0 (0: no wait)")
    argv = [PROGRAM, "start", "--detach", "--name", run_name(name), "--restarts", str(restarts)]
    if workers is not None:
        argv += ["--workers", str(workers)]
    return [*argv, "--", *launched(command, ranks, env or {})]


def last_lines(name: str, count: int) -> list[str]:
    """The end of a run's output: kompi-run logs through tail (the output of a long run is long)."""
    return ["sh", "-c", f'{PROGRAM} logs "$1" | tail -n {int(count)}', "sh", run_name(name)]
