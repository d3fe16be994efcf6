"""MPI job for the image tests: every rank contributes rank + 1, and reports where it ran.

Prints one JSON line per rank (rank 0 also reports the MPI library), read by test_mpi_cluster.py.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

from mpi4py import MPI


def local_addresses() -> list[str]:
    """The rank's IPv4 addresses but loopback's, from the kernel's routing table (/32 host LOCAL entries):
    a pod's own address, or its node's ones on the host network."""
    lines = Path("/proc/net/fib_trie").read_text().splitlines()
    found = {
        lines[index - 1].split()[-1] for index, line in enumerate(lines) if line.strip() == "/32 host LOCAL" and index
    }
    return sorted(address for address in found if not address.startswith("127."))


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
        "addresses": local_addresses(),
        "role": os.environ.get("KOMPI_ROLE"),
        "path": os.environ.get("PATH"),
    }
    if rank == 0:
        report["library"] = MPI.Get_library_version().splitlines()[0]
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
