"""MPI program for the image benchmarks: allreduce and ping-pong, 8 B latency and 4 MiB bandwidth.

Runs unchanged in kompi's containers and natively (mpi4py only). Rank 0 prints one JSON line:
median seconds per allreduce for each size, and median seconds per one-way ping-pong message
(half a round trip between ranks 0 and 1; the other ranks wait).
"""

from __future__ import annotations

import array
import json
import statistics
import time
from collections.abc import Callable

from mpi4py import MPI

SIZES = (8, 4 * 2**20)
ROUNDS = 7
REPEATS = {8: 200, 4 * 2**20: 10}


def median_seconds(comm: MPI.Comm, size: int, step: Callable[[], None]) -> float:
    step()  # warm-up: connections, rendezvous set-up
    samples = []
    for _ in range(ROUNDS):
        comm.Barrier()
        start = time.perf_counter()
        for _ in range(REPEATS[size]):
            step()
        samples.append((time.perf_counter() - start) / REPEATS[size])
    return statistics.median(samples)


def allreduce(comm: MPI.Comm, size: int) -> float:
    send = array.array("d", bytes(size))
    receive = array.array("d", bytes(size))
    return median_seconds(comm, size, lambda: comm.Allreduce(send, receive, op=MPI.SUM))


def pingpong(comm: MPI.Comm, size: int) -> float:
    buffer = bytearray(size)
    rank = comm.Get_rank()

    def step() -> None:
        if rank == 0:
            comm.Send(buffer, dest=1)
            comm.Recv(buffer, source=1)
        elif rank == 1:
            comm.Recv(buffer, source=0)
            comm.Send(buffer, dest=0)

    return median_seconds(comm, size, step) / 2


def main() -> None:
    comm = MPI.COMM_WORLD
    results = {
        "allreduce": {size: allreduce(comm, size) for size in SIZES},
        "pingpong": {size: pingpong(comm, size) for size in SIZES},
    }
    if comm.Get_rank() == 0:
        print(json.dumps({"ranks": comm.Get_size(), "seconds": results}), flush=True)


if __name__ == "__main__":
    main()
