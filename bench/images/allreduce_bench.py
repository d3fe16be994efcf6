"""MPI program for bench/images/mpi_cluster.py: allreduce latency (8 B) and bandwidth (4 MiB).

Rank 0 prints one JSON line: median seconds per allreduce for each size.
"""

from __future__ import annotations

import array
import json
import statistics
import time

from mpi4py import MPI

SIZES = (8, 4 * 2**20)
ROUNDS = 7
REPEATS = {8: 200, 4 * 2**20: 10}


def timed(comm: MPI.Comm, size: int) -> float:
    send = array.array("d", bytes(size))
    receive = array.array("d", bytes(size))
    comm.Allreduce(send, receive, op=MPI.SUM)  # warm-up: connections
    samples = []
    for _ in range(ROUNDS):
        comm.Barrier()
        start = time.perf_counter()
        for _ in range(REPEATS[size]):
            comm.Allreduce(send, receive, op=MPI.SUM)
        samples.append((time.perf_counter() - start) / REPEATS[size])
    return statistics.median(samples)


def main() -> None:
    comm = MPI.COMM_WORLD
    results = {size: timed(comm, size) for size in SIZES}
    if comm.Get_rank() == 0:
        print(json.dumps({"ranks": comm.Get_size(), "seconds": results}), flush=True)


if __name__ == "__main__":
    main()
