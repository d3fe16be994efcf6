"""MPI job for the image tests: every rank contributes rank + 1, and reports where it ran.

Prints one JSON line per rank (rank 0 also reports the MPI library), read by test_mpi_cluster.py.
"""

from __future__ import annotations

import json
import os
import socket

from mpi4py import MPI


def main() -> None:
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    total = comm.allreduce(rank + 1, op=MPI.SUM)
    report = {
        "rank": rank,
        "size": size,
        "sum": total,
        "hostname": socket.gethostname(),
        "fqdn": socket.getfqdn(),
        "processor": MPI.Get_processor_name(),
        "role": os.environ.get("KOMPI_ROLE"),
        "path": os.environ.get("PATH"),
    }
    if rank == 0:
        report["library"] = MPI.Get_library_version().splitlines()[0]
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
