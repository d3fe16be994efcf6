"""Locks a killed `kompi up` leaves in a local (file://) backend.

Pulumi's file backend writes a lock per running operation, with the pid and host of the CLI. A CLI that
was SIGKILLed never removes it, and every later operation refuses to start. A lock from this host whose
process is gone cannot belong to a running operation, so kompi removes it (and says so); any other lock
stays, and Pulumi's own message explains it.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from pathlib import Path


def process_runs(pid: int, command: str) -> bool:
    """Whether ``pid`` is a live process named ``command``. A zombie does not count: a killed CLI whose
    parent died too is reparented to PID 1, and an init that does not reap (as on CI's VMs) keeps it
    in the process table, name and all, for ever."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    # "pid (comm) state ...": comm may hold spaces and parentheses, so split at the last ')'.
    name = stat[stat.index("(") + 1 : stat.rindex(")")]
    state = stat[stat.rindex(")") + 2 :].split(" ", 1)[0]
    return name == command and state not in ("Z", "X")


def remove_stale_locks(backend_url: str, project: str, stack: str, log: Callable[[str], None]) -> list[Path]:
    if not backend_url.startswith("file://"):
        return []
    root = Path(backend_url.removeprefix("file://").split("?", 1)[0]) / ".pulumi" / "locks"
    removed = []
    for lock in root.glob(f"*/{project}/{stack}/*.json"):
        try:
            holder = json.loads(lock.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if holder.get("hostname") != socket.gethostname() or process_runs(int(holder.get("pid", 0)), "pulumi"):
            continue
        lock.unlink(missing_ok=True)
        Path(f"{lock}.attrs").unlink(missing_ok=True)
        log(f"removed a stale lock of stack {stack}: pid {holder.get('pid')} of {holder.get('timestamp')} is gone")
        removed.append(lock)
    return removed
