"""torch.distributed from `mpiexec` alone: no torchrun, no second launcher.

Open MPI tells every rank its place (OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK); rank 0 picks the
rendezvous address (its own pod address and a free port) and MPI itself broadcasts it, so the ranks
agree on it however `mpiexec` mapped them (--map-by, --host, the master as a compute node). The hostfile
is not read: its first line is rank 0's host only under the default mapping.

    from kompi_torch import init_process_group
    place = init_process_group()      # gloo on CPU, NCCL on GPU (one GPU per local rank)
    model = DistributedDataParallel(model.to(place.device), ...)

Outside `mpiexec` (a plain `python3 train.py`) it starts a world of one, so the same script runs on a laptop.
Set MASTER_ADDR or MASTER_PORT to choose the rendezvous address yourself (a pod on hostNetwork with
several interfaces, say).
"""

from __future__ import annotations

import datetime
import os
import socket
from dataclasses import dataclass

import torch
import torch.distributed as dist


@dataclass(frozen=True)
class Place:
    """Where this process sits in the job."""

    rank: int
    world_size: int
    local_rank: int
    backend: str
    device: torch.device


def _env_int(*names: str, default: int) -> int:
    for name in names:
        if name in os.environ:
            return int(os.environ[name])
    return default


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("", 0))
        return int(probe.getsockname()[1])


def _rendezvous(rank: int, world_size: int) -> tuple[str, int]:
    """Rank 0's address and a free port there, the same on every rank."""
    if world_size == 1:
        return os.environ.get("MASTER_ADDR", "127.0.0.1"), int(os.environ.get("MASTER_PORT") or _free_port())
    chosen = None
    if rank == 0:
        chosen = (
            os.environ.get("MASTER_ADDR") or socket.gethostbyname(socket.gethostname()),
            int(os.environ.get("MASTER_PORT") or _free_port()),
        )
    from mpi4py import MPI  # initialises MPI; only an mpiexec-started job gets here

    return MPI.COMM_WORLD.bcast(chosen, root=0)


def init_process_group(backend: str | None = None, timeout_seconds: float = 300) -> Place:
    """Join this process to the job's default process group and return its place in it."""
    rank = _env_int("OMPI_COMM_WORLD_RANK", "RANK", default=0)
    world_size = _env_int("OMPI_COMM_WORLD_SIZE", "WORLD_SIZE", default=1)
    local_rank = _env_int("OMPI_COMM_WORLD_LOCAL_RANK", "LOCAL_RANK", default=0)
    on_gpu = torch.cuda.is_available()
    backend = backend or ("nccl" if on_gpu else "gloo")
    if on_gpu:
        device = torch.device("cuda", local_rank % torch.cuda.device_count())
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
    address, port = _rendezvous(rank, world_size)
    dist.init_process_group(
        backend,
        init_method=f"tcp://{address}:{port}",
        rank=rank,
        world_size=world_size,
        timeout=datetime.timedelta(seconds=timeout_seconds),
    )
    return Place(rank, world_size, local_rank, backend, device)
