"""Processes a local cluster starts, recorded so that `down` stops exactly those and nothing else."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}


@dataclass(frozen=True)
class Started:
    name: str
    pid: int
    exe: str


def _running(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie (a child nobody has reaped yet)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def cpu_seconds(pid: int) -> float:
    """User and system CPU a running process has spent so far (fields 14 and 15 of /proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _exe(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return None


class ProcessTable:
    """``<state>/processes.json``: name, pid and executable of each process in start order."""

    def __init__(self, state: Path) -> None:
        self.state = state
        self.file = state / "processes.json"
        self.logs = state / "logs"

    def entries(self) -> list[Started]:
        if not self.file.exists():
            return []
        return [Started(**entry) for entry in json.loads(self.file.read_text())]

    def _save(self, entries: list[Started]) -> None:
        self.file.write_text(json.dumps([entry.__dict__ for entry in entries], indent=1))

    def alive(self, entry: Started) -> bool:
        # a recycled pid runs another executable: never signal it
        return _running(entry.pid) and _exe(entry.pid) == entry.exe

    def running(self) -> list[Started]:
        return [entry for entry in self.entries() if self.alive(entry)]

    def start(
        self, name: str, command: Sequence[str], env: dict[str, str] | None = None, launcher: Sequence[str] = ()
    ) -> Started:
        """Start COMMAND (through LAUNCHER, a program that execs it, such as `nsenter --net=...`)."""
        self.logs.mkdir(parents=True, exist_ok=True)
        with open(self.logs / f"{name}.log", "ab") as log:
            process = subprocess.Popen(
                [*launcher, *command],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own session: a Ctrl-C in the user's shell does not reach it
                env=env,
            )
        _CHILDREN[process.pid] = process
        entry = Started(name, process.pid, os.path.realpath(shutil.which(command[0]) or command[0]))
        if launcher:  # until the launcher has exec'd the command, the pid runs the launcher's executable
            deadline = time.monotonic() + 5
            while _exe(process.pid) != entry.exe and process.poll() is None and time.monotonic() < deadline:
                time.sleep(0.01)
        self._save([*self.entries(), entry])
        return entry

    def log_tail(self, name: str, lines: int = 15) -> str:
        path = self.logs / f"{name}.log"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""

    def stop(self, names: Sequence[str], grace: float = 10.0) -> list[str]:
        """SIGTERM the named processes together, SIGKILL what is left after ``grace`` s; returns their names."""
        targets = [entry for entry in self.entries() if entry.name in names and self.alive(entry)]
        for entry in targets:
            os.kill(entry.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while any(_running(entry.pid) for entry in targets) and time.monotonic() < deadline:
            _reap(targets)
            time.sleep(0.05)
        for entry in targets:
            if _running(entry.pid):
                os.kill(entry.pid, signal.SIGKILL)
        while any(_running(entry.pid) for entry in targets):
            _reap(targets)
            time.sleep(0.05)
        if self.file.exists():
            self._save([entry for entry in self.entries() if entry.name not in names])
        return [entry.name for entry in targets]


def _reap(entries: Sequence[Started]) -> None:
    """Collect those of ``entries`` that this very process started (`up` and `down` in one test process);
    the others are not our children and init reaps them."""
    for entry in entries:
        child = _CHILDREN.get(entry.pid)
        if child is not None and child.poll() is not None:
            del _CHILDREN[entry.pid]


def wait_until_ready(
    what: str, timeout: float, ready: Callable[[], bool], processes: ProcessTable, error: type[Exception]
) -> float:
    """Poll ``ready`` until it holds; returns the seconds it took. Raises ``error`` at ``timeout``, or at once
    when a process of ``processes`` has exited (with its log's end). A ``ready`` that raises ``error``,
    OSError or ValueError (a server not answering yet, half a JSON document) counts as not yet."""
    started = time.monotonic()
    while True:
        try:
            if ready():
                return time.monotonic() - started
        except (error, OSError, ValueError):
            pass
        for entry in processes.entries():
            if not processes.alive(entry):
                tail = processes.log_tail(entry.name)
                raise error(f"{entry.name} exited while waiting for {what}; its log ends:\n{tail}")
        if time.monotonic() - started > timeout:
            raise error(f"{what}: not ready after {timeout:.0f} s (logs in {processes.logs})")
        time.sleep(0.2)
