#!/usr/bin/python3 -IS
"""kompi-run: runs on the master that outlive the terminal which started them.

    kompi-run start [--name N] [--restarts R] [--workers W] [--detach] -- COMMAND...
    kompi-run status [NAME] [--json]      every run (a table), or one run's state
    kompi-run logs NAME [--follow]        a run's output, to its end with --follow
    kompi-run wait NAME [--timeout S]     until the run ends; exits with its exit code
    kompi-run stop NAME                   the command's processes (mpiexec and, through it, every rank) end

`start` hands the command to a supervisor in a session of its own, so that killing the `kubectl exec` that
started it (a closed laptop, a dropped VPN) ends only the follower, never the run. The supervisor writes the
command's output to RUNS/NAME/output.log and its state to RUNS/NAME/status.json (RUNS: $KOMPI_RUNS_DIR,
else /kompi/generated/runs; on a volume, a run's record outlives the pod). Before each attempt it waits for
the workers (`kompi-wait W`; W defaults to the workers in the hostfile when the run starts), and a command
that exits non-zero starts again up to R times (default 0), after $KOMPI_RESTART_DELAY s (default 5): the
command resumes from its own checkpoint, as kompi:oneShot's restarts do. Without --detach, `start` follows
the output and exits with the run's exit code. Python standard library only.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO

PROGRAM = "kompi-run"
DEFAULT_RUNS = "/kompi/generated/runs"
HOSTFILE = "/kompi/generated/hostfile"
OUTPUT = "output.log"
STATUS = "status.json"
FINAL = ("succeeded", "failed", "stopped")
STOP_GRACE = float(os.environ.get("KOMPI_STOP_GRACE", "10"))  # seconds from SIGTERM to SIGKILL of the command
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")


class RunError(Exception):
    """A one-line answer for the person at the terminal (exit 2)."""


@dataclass
class Status:
    name: str
    command: list[str]
    restarts: int  # the budget
    workers: int  # waited for before each attempt; 0: no wait
    state: str = "starting"  # starting, waiting, running, restarting, then one of FINAL; "lost" when read
    attempt: int = 0  # restarts done
    exit_code: int | None = None  # the last attempt's
    reason: str = ""  # the last line of the run, as kompi-oneshot's termination message
    pid: int = 0  # the supervisor's
    pid_started: str = ""  # its start time in /proc, so that a reused pid is not taken for it
    started_at: float = field(default_factory=time.time)
    ended_at: float | None = None


def runs_dir() -> Path:
    return Path(os.environ.get("KOMPI_RUNS_DIR") or DEFAULT_RUNS)


def run_dir(name: str) -> Path:
    if not NAME.fullmatch(name):
        raise RunError(f"run name {name!r}: expected letters, digits, '.', '_' or '-', at most 63")
    return runs_dir() / name


def process_start(pid: int) -> str:
    """The process's start time (field 22 of /proc/PID/stat), or "" when there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat.rsplit(")", 1)[1].split()[19]


def write_status(directory: Path, status: Status) -> None:
    """Readers see the old file or the new one (temporary file, then rename)."""
    handle, temp = tempfile.mkstemp(prefix=f".{STATUS}.", dir=directory)
    try:
        with os.fdopen(handle, "w") as out:
            json.dump(asdict(status), out, indent=1)
        os.chmod(temp, 0o644)
        os.replace(temp, directory / STATUS)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def read_status(name: str) -> Status:
    path = run_dir(name) / STATUS
    try:
        status = Status(**json.loads(path.read_text()))
    except FileNotFoundError:
        raise RunError(f"no run {name!r} in {runs_dir()} (kompi-run status lists them)") from None
    if status.state not in FINAL and (not status.pid or process_start(status.pid) != status.pid_started):
        status.state = "lost"  # the supervisor is gone without an end: the pod or container restarted
    return status


def workers_in_hostfile() -> int:
    try:
        text = Path(os.environ.get("KOMPI_HOSTFILE", HOSTFILE)).read_text()
    except FileNotFoundError:
        return 0
    own = f"{socket.gethostname()}."  # the master's own line (kompi:masterSlots) is no worker
    return sum(1 for line in text.splitlines() if line.strip() and not line.startswith(own))


# --- the supervisor: one per run, in a session of its own ---------------------------------------------


class Supervisor:
    def __init__(self, directory: Path, status: Status, log: IO[str]) -> None:
        self.directory, self.status, self.log = directory, status, log
        self.child: subprocess.Popen[bytes] | None = None
        self.stop_deadline: float | None = None  # set by SIGTERM: then SIGKILL for what still runs

    def say(self, message: str) -> None:
        print(f"{PROGRAM}: {message}", file=self.log, flush=True)

    def update(self, **changes: object) -> None:
        for key, value in changes.items():
            setattr(self.status, key, value)
        write_status(self.directory, self.status)

    def in_child(self, command: list[str]) -> int:
        """Runs ``command`` in a process group of its own (so that stop reaches every process it starts)."""
        child = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log, start_new_session=True
        )
        self.child, killed = child, False
        while True:  # waits in steps: the SIGTERM handler only marks the stop, the kill happens here
            try:
                code = child.wait(0.2)
                break
            except subprocess.TimeoutExpired:
                if self.stop_deadline is not None and time.monotonic() >= self.stop_deadline and not killed:
                    self.signal_child(signal.SIGKILL)
                    killed = True
        self.child = None
        if self.stop_deadline is not None:  # what the group's leader left behind ends too, killed after the grace
            while group_alive(child.pid) and time.monotonic() < self.stop_deadline:
                time.sleep(0.1)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)
        return 128 - code if code < 0 else code  # a signal, as a shell reports it

    def signal_child(self, number: signal.Signals) -> None:
        if self.child is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.child.pid, number)

    def stop(self, *_: object) -> None:
        if self.stop_deadline is None:
            self.stop_deadline = time.monotonic() + STOP_GRACE
            self.signal_child(signal.SIGTERM)

    @property
    def stopping(self) -> bool:
        return self.stop_deadline is not None

    def pause(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while not self.stopping and time.monotonic() < deadline:
            time.sleep(0.1)

    def finish(self, state: str, code: int, reason: str) -> int:
        self.say(f"{reason}: exit code {code}")
        self.update(state=state, exit_code=code, reason=reason, ended_at=time.time())
        return code

    def run(self) -> int:
        signal.signal(signal.SIGTERM, self.stop)
        signal.signal(signal.SIGINT, self.stop)
        status, code = self.status, None
        delay = float(os.environ.get("KOMPI_RESTART_DELAY", "5"))
        while True:
            if status.workers:
                self.update(state="waiting")
                timeout = os.environ.get("KOMPI_WAIT_TIMEOUT", "600")
                if self.in_child(["kompi-wait", str(status.workers), "--timeout", timeout]) != 0 and not self.stopping:
                    after = f" to restart after exit code {code}" if code is not None else ""
                    return self.finish("failed", 1, f"workers not ready{after}")
            if self.stopping:
                return self.finish("stopped", 143, "stopped")
            self.say(f"running: {shlex.join(status.command)}")
            self.update(state="running")
            code = self.in_child(status.command)
            if self.stopping:
                return self.finish("stopped", code, "stopped while running")
            if code == 0:
                after = f" after {restarts_said(status.attempt)}" if status.attempt else ""
                return self.finish("succeeded", 0, f"command succeeded{after}")
            if status.attempt >= status.restarts:
                spent = f" after {restarts_said(status.restarts)} (--restarts {status.restarts}, spent)"
                return self.finish("failed", code, f"command failed{spent if status.restarts else ''}")
            self.update(state="restarting", attempt=status.attempt + 1, exit_code=code)
            self.say(f"restart {status.attempt} of {status.restarts} after exit code {code}")
            self.pause(delay)  # a worker that is going leaves DNS meanwhile
            if self.stopping:
                return self.finish("stopped", code, "stopped while restarting")


def group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


def restarts_said(count: int) -> str:
    return "1 restart" if count == 1 else f"{count} restarts"


def supervise(name: str) -> int:
    directory = run_dir(name)
    status = Status(**json.loads((directory / STATUS).read_text()))
    status.pid, status.pid_started = os.getpid(), process_start(os.getpid())
    with open(directory / OUTPUT, "a", buffering=1) as log:
        supervisor = Supervisor(directory, status, log)
        supervisor.update()  # its pid: `start` waits for it
        return supervisor.run()


# --- the commands -------------------------------------------------------------------------------------


def start(options: argparse.Namespace) -> int:
    command: list[str] = options.command
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        raise RunError("no command given: kompi-run start [options] -- COMMAND...")
    name = options.name or time.strftime("run-%Y%m%d-%H%M%S")
    directory = run_dir(name)
    workers = workers_in_hostfile() if options.workers is None else options.workers
    try:
        directory.mkdir(parents=True)
    except FileExistsError:
        raise RunError(f"run {name!r} exists already ({directory}): choose another --name") from None
    except OSError as error:
        raise RunError(
            f"cannot create {directory}: {error.strerror} (set KOMPI_RUNS_DIR to a writable directory)"
        ) from None
    write_status(directory, Status(name, command, options.restarts, workers))
    (directory / OUTPUT).touch()
    script = os.path.realpath(__file__)
    supervisor = subprocess.Popen(
        [sys.executable, "-IS", script, "_supervise", name],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # no SIGHUP, no Ctrl-C from the terminal that started it
    )
    deadline = time.monotonic() + 30
    while not json.loads((directory / STATUS).read_text())["pid"]:  # the supervisor says it runs
        if supervisor.poll() is not None or time.monotonic() > deadline:
            raise RunError(f"run {name}: its supervisor did not start (exit {supervisor.poll()})")
        time.sleep(0.02)
    print(f"{PROGRAM}: run {name} started ({directory}); kompi-run logs --follow {name}", file=sys.stderr)
    if options.detach:
        return 0
    return follow(name, sys.stdout)


def follow(name: str, out: IO[str], poll: float = 0.2) -> int:
    """Copies the run's output to ``out`` as it is written; the run's exit code once it ended."""
    directory = run_dir(name)
    with open(directory / OUTPUT, encoding="utf-8", errors="replace") as log:
        while True:
            status = read_status(name)  # before the read: nothing written before the end is missed
            chunk = log.read()
            if chunk:
                out.write(chunk)
                out.flush()
            if status.state in FINAL or status.state == "lost":
                return status.exit_code if status.exit_code is not None else 1
            if not chunk:
                time.sleep(poll)


def wait(name: str, timeout: float | None, poll: float = 0.5) -> int:
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        status = read_status(name)
        if status.state in FINAL or status.state == "lost":
            print(describe(status))
            return status.exit_code if status.exit_code is not None else 1
        if deadline is not None and time.monotonic() >= deadline:
            print(f"{PROGRAM}: run {name} still {status.state} after {timeout:g} s", file=sys.stderr)
            return 124
        time.sleep(poll)


def stop(name: str, timeout: float = STOP_GRACE + 20) -> int:
    status = read_status(name)
    if status.state in FINAL or status.state == "lost":
        print(describe(status))
        return 0
    os.kill(status.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while (status := read_status(name)).state not in (*FINAL, "lost"):
        if time.monotonic() >= deadline:
            raise RunError(f"run {name} did not stop within {timeout:g} s (supervisor pid {status.pid})")
        time.sleep(0.2)
    print(describe(status))
    return 0


def describe(status: Status) -> str:
    code = "" if status.exit_code is None else f", exit code {status.exit_code}"
    why = f": {status.reason}" if status.reason and status.state in FINAL else ""
    if status.state == "lost":
        why = ": its supervisor is gone (the pod or container restarted); start it again"
    return f"{status.name} {status.state}{code}{why}"


def list_runs(as_json: bool) -> int:
    names = sorted(p.parent.name for p in runs_dir().glob(f"*/{STATUS}"))
    runs = [read_status(name) for name in names]
    if as_json:
        print(json.dumps([asdict(run) for run in runs], indent=1))
        return 0
    print(f"{'NAME':24} {'STATE':10} {'RESTARTS':8} {'EXIT':4}  COMMAND")
    for run in runs:
        code = "" if run.exit_code is None else str(run.exit_code)
        print(f"{run.name:24} {run.state:10} {f'{run.attempt}/{run.restarts}':8} {code:4}  {shlex.join(run.command)}")
    return 0


def restarts_count(text: str) -> int:
    if not text.isdigit() or int(text) > 100:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number from 0 to 100")
    return int(text)


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog=PROGRAM, description=__doc__.split("\n\n")[0])
    commands = top.add_subparsers(dest="action", required=True)
    begin = commands.add_parser("start", help="start a run that outlives this terminal")
    begin.add_argument("--name", help="the run's name (default run-DATE-TIME)")
    begin.add_argument("--restarts", type=restarts_count, default=0, metavar="R", help="0 to 100 (default 0)")
    begin.add_argument("--workers", type=int, help="workers to wait for before each attempt (default: the hostfile's)")
    begin.add_argument("--detach", action="store_true", help="return at once instead of following the output")
    begin.add_argument("command", nargs=argparse.REMAINDER)
    state = commands.add_parser("status", help="every run, or one")
    state.add_argument("name", nargs="?")
    state.add_argument("--json", action="store_true")
    logs = commands.add_parser("logs", help="a run's output")
    logs.add_argument("name")
    logs.add_argument("--follow", "-f", action="store_true")
    until = commands.add_parser("wait", help="until a run ends; its exit code")
    until.add_argument("name")
    until.add_argument("--timeout", type=float)
    halt = commands.add_parser("stop", help="end a run's processes")
    halt.add_argument("name")
    hidden = commands.add_parser("_supervise")
    hidden.add_argument("name")
    return top


def main(argv: list[str]) -> int:
    options = parser().parse_args(argv)
    try:
        if options.action == "start":
            return start(options)
        if options.action == "_supervise":
            return supervise(options.name)
        if options.action == "status":
            if options.name is None:
                return list_runs(options.json)
            status = read_status(options.name)
            print(json.dumps(asdict(status), indent=1) if options.json else describe(status))
            return 0
        if options.action == "logs":
            if options.follow:
                follow(options.name, sys.stdout)
            else:
                read_status(options.name)  # a clear line for a run that does not exist
                sys.stdout.write((run_dir(options.name) / OUTPUT).read_text(errors="replace"))
            return 0
        if options.action == "wait":
            return wait(options.name, options.timeout)
        return stop(options.name)
    except RunError as error:
        print(f"{PROGRAM}: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C on a follower: the run goes on
        print(f"\n{PROGRAM}: detached; the run goes on", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
