"""Subcommands `engine`, `local`, and `up|preview|destroy|refresh` of bin/kompi."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from contextlib import AbstractContextManager, ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

from kompi_engine import paths

if TYPE_CHECKING:
    from kompi_components.config import KompiConfig
    from kompi_engine.first_node import NodeChoice
    from kompi_engine.kubectl import Kubectl
    from kompi_engine.local_cluster import LocalCluster
    from kompi_engine.ports import Ports

EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


def _say(line: str) -> None:
    print(f"[kompi] {line}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- engine
def _engine_build(args: argparse.Namespace) -> int:
    from kompi_engine.build import build_engine
    from kompi_engine.gobuild import BuildError

    try:
        build_engine(args.components or None)
    except BuildError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_FAILED
    return 0


# ---------------------------------------------------------------- local
PORT_OFFSET_VARIABLE = "KOMPI_LOCAL_PORT_OFFSET"


def _local_ports() -> Ports:
    """The default ports, or all of them shifted (a second cluster beside the user's, as the tests run)."""
    from kompi_engine.ports import Ports

    return Ports.shifted(int(os.environ.get(PORT_OFFSET_VARIABLE) or 0))


def _cluster(args: argparse.Namespace) -> LocalCluster:
    from kompi_engine.local_cluster import FakeNodes, LocalCluster

    real = args.node == "real"
    count = args.nodes if args.nodes is not None else (1 if real else FakeNodes().count)
    return LocalCluster(
        state=Path(args.dir) if args.dir else paths.default_cluster_dir(),
        ports=_local_ports(),
        nodes=FakeNodes(count=count, gpus=args.gpus_per_node),
        real_node=real,
        real_nodes=count,
        mtu=args.mtu,
    )


def _local(args: argparse.Namespace) -> int:
    from kompi_engine.fabric import FabricError
    from kompi_engine.local_cluster import LocalClusterError
    from kompi_engine.real_node import RealNodeError

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
    except (LocalClusterError, RealNodeError, FabricError) as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_FAILED
    return 0


def _kubectl(args: argparse.Namespace) -> int:
    """The engine's kubectl on the local cluster: the README's commands need no kubectl of one's own."""
    from kompi_engine.local_cluster import LocalCluster

    cluster = LocalCluster(ports=_local_ports())
    binary = paths.bin_dir() / "kubectl"
    if not binary.exists():
        print("error: the engine has no kubectl yet: run bin/kompi engine build", file=sys.stderr)
        return EXIT_FAILED
    if not cluster.processes.running():
        print(f"error: no local cluster runs from {cluster.state}: start it with bin/kompi local up", file=sys.stderr)
        return EXIT_FAILED
    return subprocess.run(
        [str(binary), "--kubeconfig", str(cluster.kubeconfig), *args.arguments], check=False
    ).returncode


# ---------------------------------------------------------------- up / preview / destroy / refresh
def _use_engine_binaries() -> None:
    """Put the engine's pulumi CLI and providers first on PATH (Pulumi finds plugins on PATH), and its runner
    of Python dynamic providers (kompi's rollout step and data guard), which runs this Python."""
    engine_bin = paths.bin_dir()
    found = [str(engine_bin)] if engine_bin.is_dir() else []
    os.environ["PATH"] = os.pathsep.join([*found, str(paths.plugins_dir()), os.environ.get("PATH", "")])
    os.environ.setdefault("KOMPI_PYTHON", sys.executable)


def _ensure_local_cluster(config: KompiConfig, node: NodeChoice) -> None:
    from kompi_engine.build import build_engine, is_built
    from kompi_engine.first_node import choose, ensure_image
    from kompi_engine.local_cluster import LocalCluster

    if not is_built():
        _say("building the engine (once; cold: about half an hour on 2 cores)")
        build_engine()
    cluster = LocalCluster(ports=_local_ports())
    if not cluster.processes.running():
        real, images = choose(node, cluster.node, config, _say)
        cluster = LocalCluster(ports=_local_ports(), real_node=real, node_images=images)
        nodes = "one real node" if real else "kwok's nodes"
        _say(f"starting a local cluster in {cluster.state} ({nodes})")
        cluster.up(_say)
    elif (nodes_running := cluster.running_nodes()) and (images := ensure_image(config, _say)):
        # a running cluster's real nodes get the stack's image if they lack it (`local up` loads no training
        # image): else its pods could not start
        for real_node in nodes_running:
            real_node.load(images, _say)
    os.environ["KUBECONFIG"] = str(cluster.kubeconfig)
    _say(f"KUBECONFIG={cluster.kubeconfig}")
    if not cluster.node.processes.running():
        _say(
            "this local cluster's nodes are kwok's: pods become Ready but run no container, so firstJob cannot "
            "run on them. For a node that runs kompi's images (as root): bin/kompi local down && bin/kompi local "
            "up --node real (docs/development.md)"
        )


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

    from kompi_components.config import ConfigError, load_config
    from kompi_components.stack_files import StackFileError, read_stack_config
    from kompi_engine.api_watch import watching_api
    from kompi_engine.automation import (
        Cancelled,
        Workspace,
        interrupt_cli,
        open_stack,
        provider_settings,
        run_operation,
    )
    from kompi_engine.fabric import FabricError
    from kompi_engine.first_node import NoRealNode
    from kompi_engine.job_readiness import JobReadinessError
    from kompi_engine.kubectl import provider_kubectl
    from kompi_engine.local_cluster import LocalClusterError
    from kompi_engine.real_node import RealNodeError

    workspace = Workspace(Path(args.dir).resolve(), args.stack)
    api = None
    try:  # before building, starting or asking anything
        config = load_config(read_stack_config(workspace.project_dir, workspace.stack))
    except (ConfigError, StackFileError) as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if not _confirmed(args):
        return EXIT_BAD_INPUT
    try:
        if args.local:
            _ensure_local_cluster(config, args.node)
        _use_engine_binaries()
        if shutil.which("pulumi") is None:
            print("error: no pulumi CLI: run bin/kompi engine build (or install the Pulumi CLI)", file=sys.stderr)
            return EXIT_FAILED
        stack = open_stack(workspace)
        with ExitStack() as during:
            # every kubectl call aims at the provider's cluster (relative paths: the provider's directory)
            binary = shutil.which("kubectl")
            settings = provider_settings(stack)
            kubectl = during.enter_context(provider_kubectl(binary, settings, workspace.work_dir)) if binary else None
            if args.operation == "up":
                during.enter_context(_gang_watch(config, kubectl))
            api = during.enter_context(watching_api(kubectl, interrupt_cli, _say))
            result = run_operation(stack, args.operation, on_output=lambda line: print(line, flush=True))
            if args.operation == "up":
                _wait_until_jobs_can_run(config, kubectl)
    except Cancelled as signals:
        print(
            f"error: {args.operation} cancelled by {signals}; its state is saved: `{_again(args)}` finishes it",
            file=sys.stderr,
        )
        return EXIT_FAILED
    except CommandError as error:
        if api is not None and api.lost:
            print(
                f"error: the Kubernetes API server stopped answering during {args.operation}; the operation was "
                f"cancelled and its state saved: run `{_again(args)}` again once the server is back",
                file=sys.stderr,
            )
        else:
            print(f"error: pulumi {args.operation} failed (details above): {_last_error_line(error)}", file=sys.stderr)
        return EXIT_FAILED
    except (LocalClusterError, JobReadinessError, RealNodeError, FabricError, NoRealNode) as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_FAILED
    # last line, for scripts: the outputs after `up`, the {operation: count} summary after the others
    print(json.dumps(result, default=str))
    return 0


def _again(args: argparse.Namespace) -> str:
    """The command that runs this operation again, on the same cluster."""
    return f"bin/kompi {args.operation} --stack {args.stack}{' --local' if args.local else ''}"


def _wait_until_jobs_can_run(config: KompiConfig, kubectl: Kubectl | None) -> None:
    """Pulumi's wait is not enough for a job to run at once (see job_readiness); kubectl checks the rest.
    A JobReadinessError fails `up`: it must not report success while jobs would fail."""
    from kompi_engine.job_readiness import wait_until_jobs_can_run

    if kubectl is None:
        _say("no kubectl: not checking that the rollouts finished and the master lists every worker")
        return
    _say("waiting until the rollouts finish and the master lists every worker")
    wait_until_jobs_can_run(config, kubectl, _say)


def _gang_watch(config: KompiConfig, kubectl: Kubectl | None) -> AbstractContextManager[None]:
    """During `up` of a gang: say why the gang is not placed, since Pulumi only counts ready pods."""
    from kompi_engine.gang_watch import watching_gang

    return watching_gang(config, kubectl, _say)


# The last line of a Python traceback, as Pulumi prints a dynamic resource's failure (kompi's rollout step,
# its data guard): "kompi_components.components.data_guard.DataLossError: refused: ...".
_RAISED = re.compile(r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception)): (?P<message>.+)$")
# Raised after the cause, by a program whose engine shut down on it: never the line to show.
_CONSEQUENCES = ("grpc.",)


def _last_error_line(error: Exception) -> str:
    """The most specific line of Pulumi's diagnostics: what kompi's own steps raised, then a resource's own
    reason ("* [DeadlineExceeded] ...") before the generic "error: update failed"."""
    lines = [line.strip() for line in str(error).splitlines()]
    raised = [
        match.group("message")
        for line in lines
        if (match := _RAISED.match(line)) and not match.group("type").startswith(_CONSEQUENCES)
    ]
    reasons = [line.removeprefix("* ") for line in lines if line.startswith("* ")]
    errors = [line for line in lines if line.startswith("error:") and "update failed" not in line]
    return (raised or reasons or errors or [line for line in lines if line] or ["no details"])[-1]


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    engine = commands.add_parser("engine", help="build the local engine (Pulumi CLI, providers, Kubernetes)")
    engine_actions = engine.add_subparsers(dest="action", required=True)
    build = engine_actions.add_parser("build", help="build missing binaries from the Go module proxy")
    build.add_argument("components", nargs="*", help="only these components (default: all)")
    build.set_defaults(run=_engine_build)

    local = commands.add_parser("local", help="a local Kubernetes cluster on 127.0.0.1 (kwok nodes)")
    local.add_argument("action", choices=("up", "down", "status"))
    local.add_argument(
        "--dir",
        help=f"state directory (default: {paths.default_cluster_dir()}; its ports shift by ${PORT_OFFSET_VARIABLE})",
    )
    local.add_argument("--nodes", type=int, help="nodes: kwok's (default 4) or real ones (default 1, at most 8)")
    local.add_argument("--gpus-per-node", type=int, default=8, help="nvidia.com/gpu per node (default: 8)")
    local.add_argument(
        "--node",
        choices=("kwok", "real"),
        default="kwok",
        help="kwok: fake nodes, no containers (default); real: kubelets with containerd running kompi's images",
    )
    local.add_argument(
        "--mtu", type=int, default=1500, help="MTU of the link between real nodes (default: 1500; 9000: jumbo frames)"
    )
    local.set_defaults(run=_local)

    # "+": every argument is kubectl's, options included (bin/kompi kubectl -n kompi-dev get pods)
    kubectl = commands.add_parser(
        "kubectl", prefix_chars="+", help="the engine's kubectl on the local cluster (bin/kompi kubectl get pods -A)"
    )
    kubectl.add_argument("arguments", nargs=argparse.REMAINDER, help="kubectl's arguments")
    kubectl.set_defaults(run=_kubectl)

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
        parser.add_argument(
            "--node",
            choices=("auto", "kwok", "real"),
            default="auto",
            help="with --local, the nodes of a cluster it starts: auto (default) a real node where this machine "
            "can run one (root, containerd; kompi's image built if missing), else kwok",
        )
        parser.set_defaults(run=_operation, operation=operation)


def main(argv: list[str] | None = None) -> int:
    """bin/kompi: kompi's own commands and the engine's."""
    from kompi_components.cli import main as kompi_main

    return kompi_main(argv, add_commands)
