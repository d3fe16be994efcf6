"""The command line: kompi-discover [watch | once | scale N | wait N] and kompi-wait N (the name it was called
by picks the command); the launcher images/scripts/kompi-discover calls main."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

from .cluster import Cluster, hostfile_path
from .scale import scale
from .sweep import Discovery
from .wait import wait
from .watcher import once, watch


def main(argv: Sequence[str]) -> int:
    program = Path(argv[0]).name
    args = list(argv[1:])
    if program == "kompi-wait":
        args = ["wait", *args]
    parser = argparse.ArgumentParser(prog=program, description="kompi worker discovery from cluster DNS")
    commands = parser.add_subparsers(dest="command")
    watch_cmd = commands.add_parser("watch", help="keep the hostfile equal to the ready workers")
    watch_cmd.add_argument("--interval", type=float, default=float(os.environ.get("KOMPI_DISCOVERY_INTERVAL", "1")))
    commands.add_parser("once", help="print the hostfile of the workers ready now")
    wait_cmd = commands.add_parser("wait", help="wait for workers 0..N-1")
    wait_cmd.add_argument("workers", type=int)
    wait_cmd.add_argument("--timeout", type=float, default=600.0, help="seconds (default 600)")
    wait_cmd.add_argument("--no-hostfile", action="store_true", help="do not require them in the hostfile")
    scale_cmd = commands.add_parser("scale", help="set the worker StatefulSet's replicas")
    scale_cmd.add_argument("replicas", type=int)
    options = parser.parse_args(args or ["watch"])
    cluster = Cluster.from_env()
    if options.command == "watch":
        watch(Discovery(cluster), hostfile_path(), options.interval)
    elif options.command == "once":
        return once(Discovery(cluster))
    elif options.command == "wait":
        hostfile = None if options.no_hostfile else hostfile_path()
        return wait(cluster, options.workers, options.timeout, hostfile)
    elif options.command == "scale":
        scale(options.replicas, cluster.worker_prefix)
    return 0
