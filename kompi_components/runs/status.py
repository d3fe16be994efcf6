"""A run's record as kompi-run keeps it (RUNS/NAME/status.json in the master), typed."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, cast, get_args

from kompi_components.runs.errors import RunsError

RunState = Literal["starting", "waiting", "running", "restarting", "succeeded", "failed", "stopped", "lost"]
FINAL: tuple[RunState, ...] = ("succeeded", "failed", "stopped", "lost")  # lost: its supervisor is gone
STATES: tuple[str, ...] = get_args(RunState)


@dataclass(frozen=True)
class RunStatus:
    """images/scripts/kompi_run.py's Status, read back: the same keys, with times as datetimes (UTC)."""

    name: str
    command: tuple[str, ...]
    restarts: int
    """the budget of restarts (kompi-run start --restarts)"""
    workers: int
    """the workers waited for before each attempt; 0: none"""
    state: RunState
    attempt: int
    """restarts done"""
    exit_code: int | None
    """the last attempt's; None while the first runs"""
    reason: str
    """the run's last line, e.g. "command failed after 1 restart (--restarts 1, spent)" """
    pid: int
    pid_started: str
    started_at: datetime
    ended_at: datetime | None

    @property
    def finished(self) -> bool:
        return self.state in FINAL

    @property
    def succeeded(self) -> bool:
        return self.state == "succeeded"

    def describe(self) -> str:
        """One line, as `kompi-run status NAME` says it: "digits failed, exit code 3: command failed"."""
        code = "" if self.exit_code is None else f", exit code {self.exit_code}"
        why = f": {self.reason}" if self.reason and self.state in FINAL else ""
        if self.state == "lost":
            why = ": its supervisor is gone (the master pod or its container restarted); start it again"
        return f"{self.name} {self.state}{code}{why}"

    @classmethod
    def from_json(cls, data: object) -> RunStatus:
        """From kompi-run's JSON; keys this client does not know are ignored (a newer image may add some)."""
        if not isinstance(data, dict):
            raise RunsError(f"kompi-run status: expected a JSON object, got {type(data).__name__}")
        name = _field(data, "name", str, "?")
        where = f"kompi-run status of {name}"
        state = _field(data, "state", str, where)
        if state not in STATES:
            raise RunsError(f"{where}: state {state!r} is none of {', '.join(STATES)} (a newer kompi-run?)")
        command = _field(data, "command", list, where)
        if not all(isinstance(word, str) for word in command):
            raise RunsError(f"{where}: command {command!r}: expected a list of strings")
        exit_code = data.get("exit_code")
        if exit_code is not None and (not isinstance(exit_code, int) or isinstance(exit_code, bool)):
            raise RunsError(f"{where}: exit_code {exit_code!r}: expected a whole number or null")
        ended = data.get("ended_at")
        return cls(
            name=name,
            command=tuple(command),
            restarts=_field(data, "restarts", int, where),
            workers=_field(data, "workers", int, where),
            state=cast(RunState, state),
            attempt=_field(data, "attempt", int, where),
            exit_code=exit_code,
            reason=_field(data, "reason", str, where),
            pid=_field(data, "pid", int, where),
            pid_started=_field(data, "pid_started", str, where),
            started_at=_time(_field(data, "started_at", (int, float), where)),
            ended_at=None if ended is None else _time(_field(data, "ended_at", (int, float), where)),
        )


def _field(data: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if key not in data:
        raise RunsError(f"{where}: no key {key!r} (is the image's kompi-run older than this client?)")
    value = data[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        expected = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise RunsError(f"{where}: {key} = {value!r}: expected {expected}")
    return value


def _time(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)
