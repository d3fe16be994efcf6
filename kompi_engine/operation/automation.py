"""kompi's own program through Pulumi's Automation API: `bin/kompi up|preview|destroy|refresh --stack NAME`.

The Pulumi CLI and the providers come from the engine cache (or PATH); the program is kompi's `run`,
served in this process. The user's Pulumi.yaml and Pulumi.<stack>.yaml are read, never rewritten: Pulumi
works on a copy under .kompi/stacks/<stack>/, where it may add its encryption salt.
"""

from __future__ import annotations

import itertools
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
from kompi_components.kube.access import kubeconfig_path
from kompi_components.program import run
from kompi_components.stack_files import read_stack_config
from kompi_engine.kubectl import KUBECONFIG, PROVIDER_KEYS
from kompi_engine.operation import killed_cli

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
        self._anchor_kubeconfig(settings.get("config") or {})
        copy.write_text(yaml.safe_dump(settings, sort_keys=False))

    def _anchor_kubeconfig(self, config: dict[str, Any]) -> None:
        """A relative `kubernetes:kubeconfig` path means the project directory's file, as under `pulumi up`;
        in the copy it would mean one in work_dir (the provider's working directory)."""
        value = config.get(KUBECONFIG)
        if isinstance(value, str) and (path := kubeconfig_path(value, self.project_dir)) is not None:
            config[KUBECONFIG] = str(path)


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


def open_stack(workspace: Workspace) -> auto.Stack:
    """Validate, clear what a killed CLI left in a local backend (kompi_engine.operation.killed_cli), select (or create)
    the stack."""
    validate(workspace)
    killed_cli.repair(workspace.backend_url(), PROJECT, workspace.stack, lambda line: print(f"kompi: {line}"))
    return select_stack(workspace)


def provider_settings(stack: auto.Stack) -> dict[str, str]:
    """The stack config that picks the Kubernetes provider's cluster (kubectl.PROVIDER_KEYS), as Pulumi
    resolves it: project defaults, and secrets decrypted (a kubeconfig is often one)."""
    config = stack.get_all_config()
    return {key: config[key].value for key in PROVIDER_KEYS if key in config}


class Cancelled(RuntimeError):
    """The operation was cancelled by SIGINT or SIGTERM (the message names it); the CLI saved its state."""


@contextmanager
def cancel_on_signal() -> Iterator[list[str]]:
    """SIGINT/SIGTERM: ask the Pulumi CLI to cancel (it stops its providers), instead of orphaning them.
    Yields the names of the signals received."""
    received: list[str] = []

    def cancel(signum: int, _frame: FrameType | None) -> None:
        received.append(signal.Signals(signum).name)
        print(f"kompi: {received[-1]}: cancelling the Pulumi operation", file=sys.stderr, flush=True)
        # A Ctrl-C at the terminal reached the CLI too; a second SIGINT would make it quit without saving state.
        interrupt_cli(cli_signalled=signum == signal.SIGINT and _terminal_signalled_our_group())

    previous = {sig: signal.signal(sig, cancel) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield received
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def interrupt_cli(cli_signalled: bool = False) -> None:
    """The CLI's own Ctrl-C handling: cancel, stop the providers, save the state. Only the CLI: the local
    cluster's daemons, when `up --local` started them, and kompi's kubectl calls are children too.

    The CLI waits for the steps in flight, and its Python dynamic providers (kompi's rollout step) ignore
    its cancel, so a rollout would hold it until its own timeout: they are stopped, their step fails, and
    the next `up` runs it again."""
    for cli in _children(os.getpid()):
        if not is_pulumi_cli(_command_line(cli)):
            continue
        # found before the CLI is signalled: a CLI that exits at once leaves them to init, no child of its own
        providers = [plugin for plugin in _children(cli) if is_dynamic_provider(_command_line(plugin))]
        if not cli_signalled:
            _signal(cli, signal.SIGINT)
        for provider in providers:
            _signal(provider, signal.SIGTERM)  # (on SIGINT, Python would wait for the step's thread)


def _signal(pid: int, signum: signal.Signals) -> None:
    with suppress(ProcessLookupError):
        os.kill(pid, signum)


def is_pulumi_cli(argv: list[str]) -> bool:
    """The Automation API runs `pulumi --non-interactive ...` (argv[0], or a script's path after its
    interpreter); nothing else kompi starts has that flag after a program named pulumi."""
    with suppress(ValueError):
        flag = argv.index("--non-interactive")
        return flag > 0 and Path(argv[flag - 1]).name == "pulumi"
    return False


def is_dynamic_provider(argv: list[str]) -> bool:
    """The plugin of Python dynamic resources: `pulumi-resource-pulumi-python`, a script that runs
    `python -u -m pulumi.dynamic`."""
    execs_it = any(pair == ("-m", "pulumi.dynamic") for pair in itertools.pairwise(argv))
    return execs_it or any(Path(arg).name == "pulumi-resource-pulumi-python" for arg in argv[:2])


def _command_line(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")[:-1]
    except OSError:
        return []


def _terminal_signalled_our_group() -> bool:
    """A Ctrl-C typed at the terminal reaches every process of the foreground group, the CLI included."""
    try:
        return sys.stdin.isatty() and os.tcgetpgrp(sys.stdin.fileno()) == os.getpgrp()
    except OSError:
        return False


def _children(pid: int) -> list[int]:
    pids: list[int] = []
    with suppress(OSError):  # (a process that has just exited)
        for task in Path(f"/proc/{pid}/task").iterdir():
            with suppress(OSError):
                pids += [int(child) for child in (task / "children").read_text().split()]
    return pids


def run_operation(
    stack: auto.Stack, operation: str, on_output: Callable[[str], None] = print, replace: list[str] | None = None
) -> dict[str, Any]:
    """Run ``operation`` on a stack from open_stack; returns the stack outputs (up) or the change summary.
    ``replace``: the URNs that `up` or `preview` replaces even if unchanged. Raises Cancelled when a signal
    cancelled it."""
    if operation not in OPERATIONS:
        raise ValueError(f"unknown operation {operation}; expected one of {', '.join(OPERATIONS)}")
    with cancel_on_signal() as signals:
        try:
            if operation == "up":
                result = stack.up(on_output=on_output, color="never", replace=replace or None)
                return {name: output.value for name, output in result.outputs.items()}
            if operation == "preview":
                return _counts(
                    stack.preview(on_output=on_output, color="never", replace=replace or None).change_summary
                )
            if operation == "refresh":
                return _counts(stack.refresh(on_output=on_output, color="never").summary.resource_changes)
            return _counts(stack.destroy(on_output=on_output, color="never").summary.resource_changes)
        except auto.errors.CommandError:
            if signals:
                raise Cancelled(" and ".join(dict.fromkeys(signals))) from None
            raise


def _counts(changes: Mapping[Any, int] | None) -> dict[str, Any]:
    """Pulumi's {operation: count} summary with plain string keys ("same", "update", "create", ...)."""
    return {str(getattr(op, "value", op)): count for op, count in (changes or {}).items()}
