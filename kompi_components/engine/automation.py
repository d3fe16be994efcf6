"""kompi's own program through Pulumi's Automation API: `bin/kompi up|preview|destroy|refresh --stack NAME`.

The Pulumi CLI and the providers come from the engine cache (or PATH); the program is kompi's `run`,
served in this process. The user's Pulumi.yaml and Pulumi.<stack>.yaml are read, never rewritten: Pulumi
works on a copy under .kompi/stacks/<stack>/, where it may add its encryption salt.
"""

from __future__ import annotations

import os
import secrets
import signal
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

import yaml
from pulumi import automation as auto

from kompi_components.config import load_config
from kompi_components.engine.stale_locks import remove_stale_locks
from kompi_components.program import run
from kompi_components.stack_files import read_stack_config

PROJECT = "kompi"
OPERATIONS = ("up", "preview", "destroy", "refresh")


@dataclass(frozen=True)
class Workspace:
    """Where a stack's state, secrets passphrase and working copy live for one project directory."""

    project_dir: Path
    stack: str

    @property
    def home(self) -> Path:
        return self.project_dir / ".kompi"

    @property
    def work_dir(self) -> Path:
        return self.home / "stacks" / self.stack

    def backend_url(self) -> str:
        return os.environ.get("PULUMI_BACKEND_URL") or f"file://{self.home / 'state'}"

    def env(self) -> dict[str, str]:
        env = {
            "PULUMI_BACKEND_URL": self.backend_url(),
            "PULUMI_SKIP_UPDATE_CHECK": "true",
            "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",  # never download a plugin at run time
        }
        if not ({"PULUMI_CONFIG_PASSPHRASE", "PULUMI_CONFIG_PASSPHRASE_FILE"} & os.environ.keys()):
            env["PULUMI_CONFIG_PASSPHRASE_FILE"] = str(self._passphrase_file())
        return env

    def _passphrase_file(self) -> Path:
        """A random passphrase for the local state's secrets, readable by this user only, made once."""
        path = self.home / "passphrase"
        if not path.exists():
            self.home.mkdir(parents=True, exist_ok=True)
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "w") as file:
                file.write(secrets.token_urlsafe(32))
        return path

    def sync_stack_files(self) -> None:
        """Copy the user's project and stack files, keeping the salt Pulumi wrote into the copy."""
        self.work_dir.mkdir(parents=True, exist_ok=True)
        (self.work_dir / "Pulumi.yaml").write_text((self.project_dir / "Pulumi.yaml").read_text())
        copy = self.work_dir / f"Pulumi.{self.stack}.yaml"
        settings: dict[str, Any] = yaml.safe_load((self.project_dir / f"Pulumi.{self.stack}.yaml").read_text()) or {}
        if copy.exists():
            previous = yaml.safe_load(copy.read_text()) or {}
            if "encryptionsalt" in previous:
                settings["encryptionsalt"] = previous["encryptionsalt"]
        copy.write_text(yaml.safe_dump(settings, sort_keys=False))


def select_stack(workspace: Workspace, pulumi_command: auto.PulumiCommand | None = None) -> auto.Stack:
    workspace.sync_stack_files()
    backend = workspace.backend_url()
    if backend.startswith("file://"):
        Path(backend.removeprefix("file://")).mkdir(parents=True, exist_ok=True)  # Pulumi does not create it
    options = auto.LocalWorkspaceOptions(
        work_dir=str(workspace.work_dir), env_vars=workspace.env(), pulumi_command=pulumi_command
    )
    return auto.create_or_select_stack(stack_name=workspace.stack, project_name=PROJECT, program=_program, opts=options)


def _program() -> None:
    run()


def validate(workspace: Workspace) -> None:
    """The same checks the program makes, before Pulumi starts: a bad value creates nothing."""
    load_config(read_stack_config(workspace.project_dir, workspace.stack))


@contextmanager
def cancel_on_signal(stack: auto.Stack) -> Iterator[None]:
    """SIGINT/SIGTERM: ask the Pulumi CLI to cancel (it stops its providers), instead of orphaning them."""

    def cancel(signum: int, _frame: FrameType | None) -> None:
        print(f"kompi: {signal.Signals(signum).name}: cancelling the Pulumi operation", file=sys.stderr, flush=True)
        if signum == signal.SIGINT and _terminal_signalled_our_group():
            return  # the CLI got this Ctrl-C too; a second SIGINT would make it quit without saving state
        interrupt_cli()

    previous = {sig: signal.signal(sig, cancel) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def interrupt_cli() -> None:
    """The CLI's own Ctrl-C handling: cancel, stop the providers, save the state."""
    for child in _children():
        with suppress(ProcessLookupError):
            os.kill(child, signal.SIGINT)


def _terminal_signalled_our_group() -> bool:
    """A Ctrl-C typed at the terminal reaches every process of the foreground group, the CLI included."""
    try:
        return sys.stdin.isatty() and os.tcgetpgrp(sys.stdin.fileno()) == os.getpgrp()
    except OSError:
        return False


def _children() -> list[int]:
    pids: list[int] = []
    for task in Path("/proc/self/task").iterdir():
        children = task / "children"
        if children.exists():
            pids += [int(pid) for pid in children.read_text().split()]
    return pids


def run_operation(workspace: Workspace, operation: str, on_output: Callable[[str], None] = print) -> dict[str, Any]:
    """Validate, then run ``operation``; returns the stack outputs (up) or the change summary."""
    validate(workspace)
    remove_stale_locks(workspace.backend_url(), PROJECT, workspace.stack, lambda line: print(f"kompi: {line}"))
    stack = select_stack(workspace)
    with cancel_on_signal(stack):
        if operation == "up":
            result = stack.up(on_output=on_output, color="never")
            return {name: output.value for name, output in result.outputs.items()}
        if operation == "preview":
            return _counts(stack.preview(on_output=on_output, color="never").change_summary)
        if operation == "refresh":
            return _counts(stack.refresh(on_output=on_output, color="never").summary.resource_changes)
        if operation == "destroy":
            return _counts(stack.destroy(on_output=on_output, color="never").summary.resource_changes)
    raise ValueError(f"unknown operation {operation}; expected one of {', '.join(OPERATIONS)}")


def _counts(changes: Mapping[Any, int] | None) -> dict[str, Any]:
    """Pulumi's {operation: count} summary with plain string keys ("same", "update", "create", ...)."""
    return {str(getattr(op, "value", op)): count for op, count in (changes or {}).items()}
