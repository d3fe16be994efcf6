"""What a killed `kompi up` leaves in a local (file://) backend, and its repair before the next operation.

- Locks. Pulumi's file backend writes a lock per running operation, with the pid and host of the CLI. A
  CLI that was SIGKILLed never removes it, and every later operation refuses to start. A lock from this
  host whose process is gone cannot belong to a running operation, so kompi removes it (and says so); any
  other lock stays, and Pulumi's own message explains it.
- Torn metadata. The backend's blob store (gocloud.dev's fileblob) writes a file's new content to a temporary
  file, then truncates and rewrites its ``.attrs`` sidecar (content type and MD5), then renames the
  temporary file into place. A CLI killed between the truncation and the write leaves the previous
  checkpoint whole beside an empty ``.attrs``, which every later read fails on (`failed to load checkpoint:
  EOF`; tests/e2e/test_faults.py met it under load). A missing sidecar reads as no metadata, so kompi
  removes a torn one of the stack's files: the stack is then at its checkpoint before the killed write,
  which `refresh` reconciles with the cluster.
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


def repair(backend_url: str, project: str, stack: str, log: Callable[[str], None]) -> list[Path]:
    """Remove what a killed CLI left that stops the stack's next operation; returns what was removed."""
    return remove_stale_locks(backend_url, project, stack, log) + remove_torn_attrs(backend_url, project, stack, log)


def _pulumi_dir(backend_url: str) -> Path | None:
    """The local backend's ``.pulumi`` folder; None for any other backend."""
    if not backend_url.startswith("file://"):
        return None
    return Path(backend_url.removeprefix("file://").split("?", 1)[0]) / ".pulumi"


def remove_torn_attrs(backend_url: str, project: str, stack: str, log: Callable[[str], None]) -> list[Path]:
    """The stack's checkpoint sidecars (``<stack>.json.attrs``, its ``.bak``'s, its history's) that are not JSON."""
    pulumi_dir = _pulumi_dir(backend_url)
    if pulumi_dir is None:
        return []
    sidecars = [
        *(pulumi_dir / "stacks" / project).glob(f"{stack}.json*.attrs"),  # (not those of a stack "dev.x")
        *(pulumi_dir / "history" / project / stack).glob("*.attrs"),
    ]
    removed = []
    for sidecar in sidecars:
        try:
            json.loads(sidecar.read_text())
            continue
        except json.JSONDecodeError:
            pass
        except OSError:
            continue
        sidecar.unlink(missing_ok=True)
        log(f"removed the torn metadata file {sidecar.name} of stack {stack} (a CLI killed while writing it)")
        removed.append(sidecar)
    return removed


def remove_stale_locks(backend_url: str, project: str, stack: str, log: Callable[[str], None]) -> list[Path]:
    pulumi_dir = _pulumi_dir(backend_url)
    if pulumi_dir is None:
        return []
    root = pulumi_dir / "locks"
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
