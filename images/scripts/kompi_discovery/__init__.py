"""kompi's worker discovery from cluster DNS alone (no Kubernetes API, no credentials).

Installed as two commands, symlinks to the launcher images/scripts/kompi-discover (the program looks at the
name it was called by):
  kompi-discover [watch]       keep $KOMPI_HOSTFILE equal to the ready workers (a sweep every ~1 s)
  kompi-discover once          print the hostfile the ready workers give, once
  kompi-discover scale N       set the worker StatefulSet's replicas (one-shot mode: the pod's own
                               service account may patch that one scale subresource, nothing else)
  kompi-wait N [--timeout S]   block until workers 0..N-1 are in DNS, answer with an SSH banner and
                               are in the hostfile; exit 1 naming the missing ones after S seconds

Ready workers come from cluster DNS. Kubernetes DNS publishes, for each ready endpoint of the headless
Service, an SRV record of its named port (_ssh._tcp.<service domain>, target = the pod's
<hostname>.<service domain>) and the pod's own name; a pod that is not ready has neither.

One SRV answer lists every ready worker while it fits in a DNS message (65,535 bytes over TCP: about
800 to 1,100 workers from CoreDNS, which then drops the rest and sets the TC bit). A cut answer is never
taken as the cluster: its records count as ready, and every other worker is looked up by its own name (one
small query each, many in flight at once), every ordinal kompi allows (0 to 4,095), so that no block of
workers that are not ready yet hides the ready ones above it; past that, block by block of 64 while the
last block held a ready worker (a StatefulSet scaled by hand). A worker
leaves the hostfile only when DNS has denied it in 3 sweeps in a row (the SRV answer and a lookup of
its own name each time), so that a stray NXDOMAIN for a ready pod (coredns/coredns#6518, #6658) does not
drop it; a query that times out is no answer at all and changes nothing (an SRV query that UDP leaves
unanswered is asked over TCP first: docs/one-shot.md, "No answer"). docs/scale.md has the sizes.
Only the Python standard library is used (a minimal DNS client).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

from . import scale as scaling  # the package's attributes `scale` and `wait` stay the modules
from . import wait as waiting
from .cluster import Cluster, hostfile_path
from .sweep import Discovery
from .watcher import once, watch

# --- command line ------------------------------------------------------------------------------


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
        return waiting.wait(cluster, options.workers, options.timeout, hostfile)
    elif options.command == "scale":
        scaling.scale(options.replicas, cluster.worker_prefix)
    return 0
