"""`bin/kompi up|preview|destroy|refresh`: one Pulumi operation on a stack through the Automation API, with
kompi's checks around it (the stack config before anything starts; after `up`, that a job can run at once)."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from pulumi.automation.errors import CommandError

from kompi_components.config import ConfigError, KompiConfig, load_config
from kompi_components.stack_files import StackFileError, read_stack_config
from kompi_engine import paths
from kompi_engine.build.engine import KWOK_CLUSTER, build_engine, is_built
from kompi_engine.cluster.fabric import FabricError
from kompi_engine.cluster.local import LocalCluster, LocalClusterError
from kompi_engine.cluster.ports import Ports
from kompi_engine.cluster.real_node import RealNodeError
from kompi_engine.console import EXIT_BAD_INPUT, EXIT_FAILED, error, say
from kompi_engine.kubectl import Kubectl, provider_kubectl
from kompi_engine.operation.api_watch import watching_api
from kompi_engine.operation.automation import (
    Cancelled,
    Workspace,
    interrupt_cli,
    open_stack,
    provider_settings,
    run_operation,
)
from kompi_engine.operation.first_node import NodeChoice, NoRealNode, choose, ensure_image
from kompi_engine.operation.gang_watch import watching_gang
from kompi_engine.operation.job_readiness import JobReadinessError, wait_until_jobs_can_run

# Failures whose own message says what happened and what to do: printed as they are.
_EXPLAINED = (LocalClusterError, JobReadinessError, RealNodeError, FabricError, NoRealNode)


def run(args: argparse.Namespace) -> int:
    """The exit status: 0, EXIT_BAD_INPUT (nothing started) or EXIT_FAILED (the operation's state is saved)."""
    workspace = Workspace(Path(args.dir).resolve(), args.stack)
    try:  # before building, starting or asking anything
        config = load_config(read_stack_config(workspace.project_dir, workspace.stack))
    except (ConfigError, StackFileError) as bad:
        error(str(bad))
        return EXIT_BAD_INPUT
    if not _confirmed(args):
        return EXIT_BAD_INPUT
    try:
        if args.local:
            _ensure_local_cluster(config, args.node)
        _use_engine_binaries()
        if shutil.which("pulumi") is None:
            error("no pulumi CLI: run bin/kompi engine build (or install the Pulumi CLI)")
            return EXIT_FAILED
        result = _operate(args.operation, workspace, config, getattr(args, "replace", []))
    except Cancelled as signals:
        error(f"{args.operation} cancelled by {signals}; its state is saved: `{_again(args)}` finishes it")
        return EXIT_FAILED
    except _ApiLost:
        error(
            f"the Kubernetes API server stopped answering during {args.operation}; the operation was cancelled "
            f"and its state saved: run `{_again(args)}` again once the server is back"
        )
        return EXIT_FAILED
    except CommandError as failed:
        error(f"pulumi {args.operation} failed (details above): {last_error_line(failed)}")
        return EXIT_FAILED
    except _EXPLAINED as failed:
        error(str(failed))
        return EXIT_FAILED
    # last line, for scripts: the outputs after `up`, the {operation: count} summary after the others
    print(json.dumps(result, default=str))
    return 0


class _ApiLost(Exception):
    """The operation failed while the API server did not answer (api_watch cancelled it)."""


def _operate(operation: str, workspace: Workspace, config: KompiConfig, replace: list[str]) -> dict[str, Any]:
    stack = open_stack(workspace)
    with ExitStack() as during:
        # every kubectl call aims at the provider's cluster (relative paths: the provider's directory)
        binary = shutil.which("kubectl")
        settings = provider_settings(stack)
        kubectl = during.enter_context(provider_kubectl(binary, settings, workspace.work_dir)) if binary else None
        if operation == "up":
            # say why a gang is not placed, since Pulumi only counts ready pods
            during.enter_context(watching_gang(config, kubectl, say))
        api = during.enter_context(watching_api(kubectl, interrupt_cli, say))
        try:
            result = run_operation(stack, operation, on_output=lambda line: print(line, flush=True), replace=replace)
        except CommandError as failed:
            if api is not None and api.lost:
                raise _ApiLost from failed
            raise
        if operation == "up":
            _wait_until_jobs_can_run(config, kubectl)
    return result


def _use_engine_binaries() -> None:
    """Put the engine's pulumi CLI and providers first on PATH (Pulumi finds plugins on PATH), and its runner
    of Python dynamic providers (kompi's rollout step and data guard), which runs this Python."""
    engine_bin = paths.bin_dir()
    found = [str(engine_bin)] if engine_bin.is_dir() else []
    os.environ["PATH"] = os.pathsep.join([*found, str(paths.plugins_dir()), os.environ.get("PATH", "")])
    os.environ.setdefault("KOMPI_PYTHON", sys.executable)


def _ensure_local_cluster(config: KompiConfig, node: NodeChoice) -> None:
    cluster = LocalCluster(ports=Ports.from_environment())
    starts = not cluster.processes.running()
    # a running cluster, or one of kwok's nodes, needs no real node's binaries (a build of those may be running)
    needed = None if starts and node != "kwok" else KWOK_CLUSTER
    if not is_built(needed):
        say("building the engine (once; cold: about half an hour on 2 cores)")
        build_engine(needed)
    if starts:
        real, images = choose(node, cluster.node, config, say)
        cluster = LocalCluster(ports=Ports.from_environment(), real_node=real, node_images=images)
        nodes = "one real node" if real else "kwok's nodes"
        say(f"starting a local cluster in {cluster.state} ({nodes})")
        cluster.up(say)
    elif (nodes_running := cluster.running_nodes()) and (images := ensure_image(config, say)):
        # a running cluster's real nodes get the stack's image if they lack it (`local up` loads no training
        # image): else its pods could not start
        for real_node in nodes_running:
            real_node.load(images, say)
    os.environ["KUBECONFIG"] = str(cluster.kubeconfig)
    say(f"KUBECONFIG={cluster.kubeconfig}")
    if not cluster.node.processes.running():
        say(
            "this local cluster's nodes are kwok's: pods become Ready but run no container, so firstJob cannot "
            "run on them. For a node that runs kompi's images (as root): bin/kompi local down && bin/kompi local "
            "up --node real (docs/development.md)"
        )


def _confirmed(args: argparse.Namespace) -> bool:
    if args.yes or args.operation in ("preview", "refresh"):
        return True
    if not sys.stdin.isatty():
        error(f"`kompi {args.operation}` changes the cluster: pass --yes (no terminal to ask)")
        return False
    answer = input(f"{args.operation} stack {args.stack}? Type 'yes' to go on: ")
    return answer.strip() == "yes"


def _again(args: argparse.Namespace) -> str:
    """The command that runs this operation again, on the same cluster."""
    return f"bin/kompi {args.operation} --stack {args.stack}{' --local' if args.local else ''}"


def _wait_until_jobs_can_run(config: KompiConfig, kubectl: Kubectl | None) -> None:
    """Pulumi's wait is not enough for a job to run at once (see job_readiness); kubectl checks the rest.
    A JobReadinessError fails `up`: it must not report success while jobs would fail."""
    if kubectl is None:
        say("no kubectl: not checking that the rollouts finished and the master lists every worker")
        return
    say("waiting until the rollouts finish and the master lists every worker")
    wait_until_jobs_can_run(config, kubectl, say)


# What a dynamic resource of kompi's raised (its rollout step, its data guard): "error: DataLossError: refused:
# ..." since kompi's providers report their own failures in one line (components/dynamic_provider.py), or the
# last line of a Python traceback ("kompi_components.components.data_guard.DataLossError: refused: ...").
_RAISED = re.compile(r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception)): (?P<message>.+)$")
# Raised after the cause, by a program whose engine shut down on it: never the line to show.
_CONSEQUENCES = ("grpc.",)


def last_error_line(failure: Exception) -> str:
    """The most specific line of Pulumi's diagnostics: what kompi's own steps raised, then a resource's own
    reason ("* [DeadlineExceeded] ...") before the generic "error: update failed"."""
    lines = [line.strip() for line in str(failure).splitlines()]
    raised = [
        match.group("message")
        for line in lines
        if (match := _RAISED.match(line.removeprefix("error: "))) and not match.group("type").startswith(_CONSEQUENCES)
    ]
    reasons = [line.removeprefix("* ") for line in lines if line.startswith("* ")]
    errors = [line for line in lines if line.startswith("error:") and "update failed" not in line]
    return (raised or reasons or errors or [line for line in lines if line] or ["no details"])[-1]
