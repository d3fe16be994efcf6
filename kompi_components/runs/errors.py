"""What the run client raises: one line a person can act on, never a Kubernetes traceback."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kompi_components.runs.status import RunStatus


class RunsError(Exception):
    """Every error of the run client; ``str()`` says what happened and what to do."""


class BadRequest(RunsError, ValueError):
    """An argument the client refuses before it reaches the cluster (a run name, an environment key)."""


class ClusterUnreachable(RunsError):
    """The master's container could not be reached: no such pod, not running, refused credentials, no server."""


class RemoteFileError(RunsError):
    """A file of the master's container that could not be read or copied (its own message: no such file, ...)."""


class KompiRunRefused(RunsError):
    """kompi-run in the master refused the request (no such run, a name already taken); its own line."""


class RunFailed(RunsError):
    """The run ended without success: failed, stopped, or lost with the master. ``exit_code`` and
    ``last_lines`` (the end of its output) say why."""

    def __init__(self, status: RunStatus, last_lines: list[str]) -> None:
        self.status = status
        self.exit_code = status.exit_code
        self.last_lines = last_lines
        tail = "".join(f"\n  {line}" for line in last_lines)
        output = f"\nits last {len(last_lines)} lines:{tail}" if last_lines else " (no output)"
        super().__init__(f"run {status.describe()}{output}")


class RunTimeout(RunsError):
    """``wait`` gave up; the run goes on (``status`` is its state then)."""

    def __init__(self, status: RunStatus, timeout: float) -> None:
        self.status = status
        super().__init__(f"run {status.name} still {status.state} after {timeout:g} s; it goes on")
