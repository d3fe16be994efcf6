#!/usr/bin/env python3
"""Open MPI's remote-launch agent for native jobs on the local cluster's real nodes: in place of ssh, runs
the daemon's command in the network namespace of the node at HOST (KOMPI_BENCH_NETNS="IP=NETNS,..."), with a
hostname and a TMPDIR of that node's own (the nodes share the machine's: two daemons under one name wrote
their session files over each other and crashed).

    netns_agent.py [ssh options] HOST COMMAND...

Open MPI calls its agent as it calls ssh: options first, then the host, then the remote command, which
ssh would hand to the remote shell as one line (so it is run by sh -c here too).
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str]) -> int:
    namespaces = dict(item.split("=", 1) for item in os.environ["KOMPI_BENCH_NETNS"].split(","))
    words = list(argv)
    while words and words[0].startswith("-"):
        words.pop(0)  # ssh's options (-x, -o ...) mean nothing here
    host, command = words[0], " ".join(words[1:])
    node = namespaces[host]
    tmp = f"/tmp/kompi-bench-native/{node}"
    os.makedirs(tmp, exist_ok=True)
    os.environ["TMPDIR"] = tmp
    own = ["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec sh -c "$1"', node, command]
    os.execvp("nsenter", ["nsenter", f"--net=/run/netns/{node}", *own])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
