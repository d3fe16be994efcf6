"""Subcommands `engine`, `local`, and `up|preview|destroy|refresh` of bin/kompi."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kompi_components.engine import paths

if TYPE_CHECKING:
    from kompi_components.engine.local_cluster import LocalCluster

EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


def _say(line: str) -> None:
    print(f"[kompi] {line}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- engine
def _engine_build(args: argparse.Namespace) -> int:
    from kompi_components.engine.build import build_engine
    from kompi_components.engine.gobuild import BuildError

    try:
        build_engine(args.components or None)
    except BuildError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_FAILED
    return 0


# ---------------------------------------------------------------- local
def _cluster(args: argparse.Namespace) -> LocalCluster:
    from kompi_components.engine.local_cluster import FakeNodes, LocalCluster

    return LocalCluster(
        state=Path(args.dir) if args.dir else paths.default_cluster_dir(),
        nodes=FakeNodes(count=args.nodes, gpus=args.gpus_per_node),
        real_node=args.node == "real",
    )


def _local(args: argparse.Namespace) -> int:
    from kompi_components.engine.local_cluster import LocalClusterError
    from kompi_components.engine.real_node import RealNodeError

    cluster = _cluster(args)
    try:
        if args.action == "up":
            print(cluster.up(_say))
        elif args.action == "down":
            stopped = cluster.down()
            _say(f"stopped {', '.join(stopped)}" if stopped else f"nothing runs from {cluster.state}")
        else:
            status = cluster.status()
            if not status:
                print(f"no local cluster in {cluster.state}")
                return EXIT_FAILED
            for name, alive in status.items():
                print(f"{name}: {'running' if alive else 'NOT running'}")
            print(f"KUBECONFIG={cluster.kubeconfig}")
            return 0 if all(status.values()) else EXIT_FAILED
    except (LocalClusterError, RealNodeError) as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_FAILED
    return 0


# ---------------------------------------------------------------- up / preview / destroy / refresh
def _use_engine_binaries() -> None:
    """Put the engine's pulumi CLI and providers first on PATH (Pulumi finds plugins on PATH)."""
    engine_bin = paths.bin_dir()
    if engine_bin.is_dir():
        os.environ["PATH"] = f"{engine_bin}{os.pathsep}{os.environ.get('PATH', '')}"


def _ensure_local_cluster() -> None:
    from kompi_components.engine.build import build_engine, is_built
    from kompi_components.engine.local_cluster import LocalCluster

    if not is_built():
        _say("building the engine (once; cold: about half an hour on 2 cores)")
        build_engine()
    cluster = LocalCluster()
    if not cluster.processes.running():
        _say(f"starting a local cluster in {cluster.state}")
        cluster.up(_say)
    os.environ["KUBECONFIG"] = str(cluster.kubeconfig)
    _say(f"KUBECONFIG={cluster.kubeconfig}")


def _confirmed(args: argparse.Namespace) -> bool:
    if args.yes or args.operation in ("preview", "refresh"):
        return True
    if not sys.stdin.isatty():
        print(f"error: `kompi {args.operation}` changes the cluster: pass --yes (no terminal to ask)", file=sys.stderr)
        return False
    answer = input(f"{args.operation} stack {args.stack}? Type 'yes' to go on: ")
    return answer.strip() == "yes"


def _operation(args: argparse.Namespace) -> int:
    from pulumi.automation.errors import CommandError

    from kompi_components.config import ConfigError
    from kompi_components.engine.api_watch import watching_api
    from kompi_components.engine.automation import Workspace, interrupt_cli, run_operation, validate
    from kompi_components.engine.job_readiness import JobReadinessError
    from kompi_components.engine.local_cluster import LocalClusterError
    from kompi_components.stack_files import StackFileError

    workspace = Workspace(Path(args.dir).resolve(), args.stack)
    api = None
    try:
        validate(workspace)  # before building, starting or asking anything
    except (ConfigError, StackFileError) as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if not _confirmed(args):
        return EXIT_BAD_INPUT
    try:
        if args.local:
            _ensure_local_cluster()
        _use_engine_binaries()
        if shutil.which("pulumi") is None:
            print("error: no pulumi CLI: run bin/kompi engine build (or install the Pulumi CLI)", file=sys.stderr)
            return EXIT_FAILED
        with _gang_watch(workspace, args.operation), watching_api(interrupt_cli, _say) as api:
            result = run_operation(workspace, args.operation, on_output=lambda line: print(line, flush=True))
            if args.operation == "up":
                _wait_until_jobs_can_run(workspace)
    except CommandError as error:
        if api is not None and api.lost:
            print(
                f"error: the Kubernetes API server stopped answering during {args.operation}; the operation was "
                f"cancelled and its state saved: run `bin/kompi {args.operation} --stack {args.stack}` again "
                "once the server is back",
                file=sys.stderr,
            )
        else:
            print(f"error: pulumi {args.operation} failed (details above): {_last_error_line(error)}", file=sys.stderr)
        return EXIT_FAILED
    except (LocalClusterError, JobReadinessError) as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_FAILED
    # last line, for scripts: the outputs after `up`, the {operation: count} summary after the others
    print(json.dumps(result, default=str))
    return 0


def _wait_until_jobs_can_run(workspace: Any) -> None:
    """Pulumi's wait is not enough for a job to run at once (see job_readiness); kubectl checks the rest.
    A JobReadinessError fails `up`: it must not report success while jobs would fail."""
    from kompi_components.config import load_config
    from kompi_components.engine.job_readiness import wait_until_jobs_can_run
    from kompi_components.stack_files import read_stack_config

    kubectl = shutil.which("kubectl")
    if kubectl is None:
        _say("no kubectl: not checking that the rollouts finished and the master lists every worker")
        return
    _say("waiting until the rollouts finish and the master lists every worker")
    config = load_config(read_stack_config(workspace.project_dir, workspace.stack))
    wait_until_jobs_can_run(config, kubectl, _say)


def _gang_watch(workspace: Any, operation: str) -> AbstractContextManager[None]:
    """During `up` of a gang: say why the gang is not placed, since Pulumi only counts ready pods."""
    from kompi_components.config import load_config
    from kompi_components.engine.gang_watch import watching_gang
    from kompi_components.stack_files import read_stack_config

    if operation != "up":
        return nullcontext()
    return watching_gang(load_config(read_stack_config(workspace.project_dir, workspace.stack)), _say)


def _last_error_line(error: Exception) -> str:
    """The most specific line of Pulumi's diagnostics: a resource's own reason ("* [DeadlineExceeded] ...")
    before the generic "error: update failed"."""
    lines = [line.strip() for line in str(error).splitlines()]
    reasons = [line.removeprefix("* ") for line in lines if line.startswith("* ")]
    errors = [line for line in lines if line.startswith("error:") and "update failed" not in line]
    return (reasons or errors or [line for line in lines if line] or ["no details"])[-1]


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    engine = commands.add_parser("engine", help="build the local engine (Pulumi CLI, providers, Kubernetes)")
    engine_actions = engine.add_subparsers(dest="action", required=True)
    build = engine_actions.add_parser("build", help="build missing binaries from the Go module proxy")
    build.add_argument("components", nargs="*", help="only these components (default: all)")
    build.set_defaults(run=_engine_build)

    local = commands.add_parser("local", help="a local Kubernetes cluster on 127.0.0.1 (kwok nodes)")
    local.add_argument("action", choices=("up", "down", "status"))
    local.add_argument("--dir", help=f"state directory (default: {paths.default_cluster_dir()})")
    local.add_argument("--nodes", type=int, default=4, help="fake nodes (default: 4)")
    local.add_argument("--gpus-per-node", type=int, default=8, help="nvidia.com/gpu per node (default: 8)")
    local.add_argument(
        "--node",
        choices=("kwok", "real"),
        default="kwok",
        help="kwok: fake nodes, no containers (default); real: one kubelet with containerd running kompi's images",
    )
    local.set_defaults(run=_local)

    for operation, text in (
        ("up", "create or update the stack's cluster"),
        ("preview", "show what `up` would change"),
        ("destroy", "delete every object of the stack"),
        ("refresh", "read the objects' live state into the stack's state"),
    ):
        parser = commands.add_parser(operation, help=f"{text} (Pulumi Automation API)")
        parser.add_argument("--stack", required=True, help="stack name: reads Pulumi.<stack>.yaml")
        parser.add_argument("--dir", default=".", help="project directory (default: .)")
        parser.add_argument("--yes", action="store_true", help="do not ask for confirmation")
        parser.add_argument(
            "--local", action="store_true", help="build the engine and start the local cluster if needed, use it"
        )
        parser.set_defaults(run=_operation, operation=operation)
