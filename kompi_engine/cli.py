"""The subcommands the engine adds to bin/kompi: `engine`, `local`, `kubectl`, and `up|preview|destroy|refresh`
(kompi_engine.operation.command).

Each command imports what it runs inside its own function, so that kompi's other commands (`render`,
`import-values`, ...) start without loading the engine or Pulumi's Automation API.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kompi_engine import paths
from kompi_engine.cluster.ports import OFFSET_VARIABLE, Ports
from kompi_engine.console import EXIT_FAILED, say

if TYPE_CHECKING:
    from kompi_engine.cluster.local import LocalCluster


# ---------------------------------------------------------------- engine
def _engine_build(args: argparse.Namespace) -> int:
    from kompi_engine.build.engine import KWOK_CLUSTER, build_engine
    from kompi_engine.build.gobuild import BuildError

    try:
        build_engine(args.components or (KWOK_CLUSTER if args.kwok else None))
    except BuildError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_FAILED
    return 0


# ---------------------------------------------------------------- local
def _namespace_selector(value: str) -> dict[str, Any]:
    label, equals, wanted = value.partition("=")
    if not equals or not label:
        raise argparse.ArgumentTypeError(f"--kueue-managed-namespaces {value!r}: expected LABEL=VALUE")
    return {"matchLabels": {label: wanted}}


def _cluster(args: argparse.Namespace) -> LocalCluster:
    from kompi_engine.cluster.kueue import Settings
    from kompi_engine.cluster.local import FakeNodes, LocalCluster

    real = args.node == "real"
    count = args.nodes if args.nodes is not None else (1 if real else FakeNodes().count)
    return LocalCluster(
        state=Path(args.dir) if args.dir else paths.default_cluster_dir(),
        ports=Ports.from_environment(),
        nodes=FakeNodes(count=count, gpus=args.gpus_per_node),
        real_node=real,
        real_nodes=count,
        mtu=args.mtu,
        kueue=args.kueue,
        kueue_settings=Settings(args.kueue_manage_jobs_without_queue_name, args.kueue_managed_namespaces),
    )


def _local(args: argparse.Namespace) -> int:
    from kompi_engine.cluster.fabric import FabricError
    from kompi_engine.cluster.local import LocalClusterError
    from kompi_engine.cluster.real_node import RealNodeError

    cluster = _cluster(args)
    try:
        if args.action == "up":
            print(cluster.up(say))
        elif args.action == "down":
            stopped = cluster.down()
            say(f"stopped {', '.join(stopped)}" if stopped else f"nothing runs from {cluster.state}")
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
    from kompi_engine.cluster.local import LocalCluster

    cluster = LocalCluster(ports=Ports.from_environment())
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
def _operation(args: argparse.Namespace) -> int:
    from kompi_engine.operation.command import run  # (Pulumi's Automation API: imported by these commands only)

    return run(args)


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    engine = commands.add_parser("engine", help="build the local engine (Pulumi CLI, providers, Kubernetes)")
    engine_actions = engine.add_subparsers(dest="action", required=True)
    build = engine_actions.add_parser("build", help="build missing binaries from the Go module proxy")
    only = build.add_mutually_exclusive_group()
    only.add_argument("components", nargs="*", default=[], help="only these components (default: all)")
    only.add_argument(
        "--kwok",
        action="store_true",
        help="only what a cluster of kwok nodes needs: not the real node's kubelet, CoreDNS, pause, kube-router "
        "and registry",
    )
    build.set_defaults(run=_engine_build)

    local = commands.add_parser(
        "local", help="a local Kubernetes cluster on 127.0.0.1: kwok's nodes, or real ones (--node real)"
    )
    local.add_argument("action", choices=("up", "down", "status"))
    local.add_argument(
        "--dir",
        help=f"state directory (default: {paths.default_cluster_dir()}; its ports shift by ${OFFSET_VARIABLE})",
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
    local.add_argument(
        "--kueue",
        action="store_true",
        help="also run Kueue (kompi:queue), with ClusterQueue kompi-gpus holding the nodes' capacity",
    )
    local.add_argument(
        "--kueue-manage-jobs-without-queue-name",
        action="store_true",
        help="with --kueue: Kueue's manageJobsWithoutQueueName, as some platforms set it",
    )
    local.add_argument(
        "--kueue-managed-namespaces",
        metavar="LABEL=VALUE",
        type=_namespace_selector,
        help="with --kueue: Kueue's managedJobsNamespaceSelector, the namespaces with this label only",
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
        if operation in ("up", "preview"):
            parser.add_argument(
                "--replace",
                action="append",
                default=[],
                metavar="URN",
                help="replace this resource even if unchanged, as `pulumi up --replace` (e.g. a one-shot run's Job "
                "to run it again: docs/one-shot.md); repeatable",
            )
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
