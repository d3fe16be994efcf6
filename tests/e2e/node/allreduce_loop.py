"""MPI job for the failure tests: allreduce in a loop for SECONDS, so that every rank is really running.

    python3 -c PROGRAM SECONDS [exit RANK CODE | oom RANK]

Each rank prints "rank R on HOST running" once the first allreduce has returned (every rank is up and
connected), then loops; "exit" makes RANK exit with CODE after one second, "oom" makes it allocate
memory until the kernel kills it. At the end each rank prints "rank R done".
"""

from __future__ import annotations

import os
import socket
import sys
import time

from mpi4py import MPI

STEP = 0.01  # seconds between allreduces
CHUNK = 32 * 1024 * 1024  # bytes per allocation in "oom" mode


def misbehave(mode: str, argument: str) -> None:
    if mode == "exit":
        print(f"rank {MPI.COMM_WORLD.Get_rank()} exits {argument}", flush=True)
        os._exit(int(argument))
    if mode == "oom":
        hoard = []
        while True:
            hoard.append(b"\x01" * CHUNK)  # written, so every page is really used
            time.sleep(0.01)


def main(argv: list[str]) -> None:
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    seconds = float(argv[0])
    mode = argv[1] if len(argv) > 1 else ""
    target = int(argv[2]) if len(argv) > 2 else 0
    argument = argv[3] if len(argv) > 3 else "1"
    comm.allreduce(1)
    print(f"rank {rank} on {socket.gethostname()} running", flush=True)
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        comm.allreduce(1)
        if mode and rank == target and time.monotonic() - start > 1:
            misbehave(mode, argument)
        time.sleep(STEP)
    print(f"rank {rank} done", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
