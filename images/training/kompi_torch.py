"""torch.distributed from `mpiexec` alone: no torchrun, no second launcher.

Open MPI tells every rank its place (OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK); rank 0 picks the
rendezvous address (its own pod address and a free port) and MPI itself broadcasts it, so the ranks
agree on it however `mpiexec` mapped them (--map-by, --host, the master as a compute node). The hostfile
is not read: its first line is rank 0's host only under the default mapping.

    from kompi_torch import init_process_group
    place = init_process_group()      # gloo on CPU, NCCL on GPU (one GPU per local rank)
    model = DistributedDataParallel(model.to(place.device), ...)

Outside `mpiexec` (a plain `python3 train.py`) it starts a world of one, so the same script runs on a laptop.

Rank 0's address: on the pod network its host name's, which the kubelet maps to the pod's IP. On the node's
network (kompi:hostNetwork) the pod reads the node's /etc/hosts, where Debian and Ubuntu map the host name to
127.0.1.1, so there every rank takes the first interface that kompi:hostNetwork.mpiInterfaces names on its node
(KOMPI_MPI_INTERFACES, names or IPv4 CIDR blocks): rank 0 offers that interface's address, and gloo binds to it
(GLOO_SOCKET_IFNAME; gloo would otherwise bind to whatever the host name resolves to, loopback included).
Your own MASTER_ADDR, MASTER_PORT and GLOO_SOCKET_IFNAME win (`mpiexec -x NAME=value` gives one to every rank).
A loopback address for ranks on several hosts fails every rank at once, saying so, instead of timing out.
"""

from __future__ import annotations

import datetime
import fcntl
import ipaddress
import os
import socket
import struct
from collections.abc import Mapping
from dataclasses import dataclass

import torch
import torch.distributed as dist

# kompi:hostNetwork.mpiInterfaces, which kompi sets in every host-network pod (kompi_components.contract's
# ENV_MPI_INTERFACES; tests/images/test_kompi_torch.py holds the two equal): interface names or IPv4 CIDR blocks.
MPI_INTERFACES = "KOMPI_MPI_INTERFACES"
GLOO_SOCKET_IFNAME = "GLOO_SOCKET_IFNAME"
_SIOCGIFADDR = 0x8915  # Linux: an interface's (primary) IPv4 address


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


def _interfaces() -> dict[str, str]:
    """This host's interfaces that have an IPv4 address, each with its (primary) address, in the kernel's order."""
    found: dict[str, str] = {}
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        for _, name in socket.if_nameindex():
            try:
                answer = fcntl.ioctl(probe.fileno(), _SIOCGIFADDR, struct.pack("256s", name.encode()[:15]))
            except OSError:  # no IPv4 address
                continue
            found[name] = socket.inet_ntoa(answer[20:24])
    return found


def _first_named(wanted: str, interfaces: Mapping[str, str]) -> tuple[str, str] | None:
    """The first interface here that ``wanted`` names (names or IPv4 CIDR blocks, comma-separated, in order)."""
    for entry in (item.strip() for item in wanted.split(",")):
        if "/" in entry:
            block = ipaddress.ip_network(entry, strict=False)
            for name, address in interfaces.items():
                if ipaddress.ip_address(address) in block:
                    return name, address
        elif entry in interfaces:
            return entry, interfaces[entry]
    return None


def _interface() -> tuple[str, str] | None:
    """(name, address) of this rank's interface for torch: GLOO_SOCKET_IFNAME's first if set, else the first that
    kompi:hostNetwork.mpiInterfaces names here (which gloo then binds to); None on the pod network."""
    given = os.environ.get(GLOO_SOCKET_IFNAME)
    wanted = given.split(",")[0] if given else os.environ.get(MPI_INTERFACES)
    if not wanted:
        return None
    interfaces = _interfaces()
    found = _first_named(wanted, interfaces)
    if found is None:
        source = f"{GLOO_SOCKET_IFNAME}={given}" if given else f"kompi:hostNetwork.mpiInterfaces ({wanted})"
        has = ", ".join(f"{name} {address}" for name, address in interfaces.items()) or "none with IPv4"
        raise RuntimeError(f"{socket.gethostname()} has no interface that {source} names; its interfaces: {has}")
    if not given:
        os.environ[GLOO_SOCKET_IFNAME] = found[0]  # read by gloo when the process group starts
    return found


def _offer(world_size: int, local_size: int, interface: tuple[str, str] | None) -> tuple[str, int] | str:
    """Rank 0's rendezvous address and port, or why it has none that the other ranks reach."""
    port = int(os.environ.get("MASTER_PORT") or _free_port())
    if os.environ.get("MASTER_ADDR"):
        return os.environ["MASTER_ADDR"], port
    if interface is not None:
        return interface[1], port
    host = socket.gethostname()
    set_it = "for every rank: mpiexec -x NAME=value"
    try:
        address = socket.gethostbyname(host)
    except OSError as error:
        return f"rank 0's host name {host} does not resolve ({error}): set MASTER_ADDR to rank 0's address {set_it}"
    if ipaddress.ip_address(address).is_loopback and local_size < world_size:
        return (
            f"rank 0's host name {host} resolves to {address}, a loopback address that the ranks on other hosts "
            "cannot reach (a pod on its node's network reads the node's /etc/hosts, where Debian and Ubuntu put "
            "the host name on 127.0.1.1). Set MASTER_ADDR to an address of rank 0's host that they reach, or "
            f"GLOO_SOCKET_IFNAME to its interface, {set_it}"
        )
    return address, port


def _rendezvous(rank: int, world_size: int, local_size: int) -> tuple[str, int]:
    """Rank 0's address and a free port there, the same on every rank."""
    if world_size == 1:
        return os.environ.get("MASTER_ADDR", "127.0.0.1"), int(os.environ.get("MASTER_PORT") or _free_port())
    try:
        interface, problem = _interface(), None
    except RuntimeError as error:
        interface, problem = None, str(error)
    offered: tuple[str, int] | str | None = None
    if rank == 0:
        offered = problem if problem is not None else _offer(world_size, local_size, interface)
    from mpi4py import MPI  # initialises MPI; only an mpiexec-started job gets here

    offered = MPI.COMM_WORLD.bcast(offered, root=0)  # every rank learns rank 0's address, or why there is none
    if problem is not None:
        raise RuntimeError(problem)
    if isinstance(offered, str):
        raise RuntimeError(f"rank 0: {offered}" if rank else offered)
    return offered


def init_process_group(backend: str | None = None, timeout_seconds: float = 300) -> Place:
    """Join this process to the job's default process group and return its place in it."""
    rank = _env_int("OMPI_COMM_WORLD_RANK", "RANK", default=0)
    world_size = _env_int("OMPI_COMM_WORLD_SIZE", "WORLD_SIZE", default=1)
    local_rank = _env_int("OMPI_COMM_WORLD_LOCAL_RANK", "LOCAL_RANK", default=0)
    local_size = _env_int("OMPI_COMM_WORLD_LOCAL_SIZE", "LOCAL_WORLD_SIZE", default=world_size)
    on_gpu = torch.cuda.is_available()
    backend = backend or ("nccl" if on_gpu else "gloo")
    if on_gpu:
        device = torch.device("cuda", local_rank % torch.cuda.device_count())
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")
    address, port = _rendezvous(rank, world_size, local_size)
    dist.init_process_group(
        backend,
        init_method=f"tcp://{address}:{port}",
        rank=rank,
        world_size=world_size,
        timeout=datetime.timedelta(seconds=timeout_seconds),
    )
    return Place(rank, world_size, local_rank, backend, device)
