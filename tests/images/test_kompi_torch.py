"""kompi_torch's rendezvous on the host (no torch, no MPI: both stood in for), for each network a pod can be on.

On the pod network the kubelet maps the pod's hostname to its pod IP, so rank 0's host name is its address. A pod
on the node's network reads the node's /etc/hosts, where Debian and Ubuntu map the hostname to 127.0.1.1: the
other ranks would dial their own loopback and gloo would bind to it, until the process group times out. There the
address and gloo's interface come from kompi:hostNetwork.mpiInterfaces (KOMPI_MPI_INTERFACES in every pod)."""

from __future__ import annotations

import socket
import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from kompi_components import contract
from tests.images.podman import REPO_ROOT
from tests.images.script_module import load_script

KOMPI_TORCH = REPO_ROOT / "images" / "training" / "kompi_torch.py"
PORT = 29500
# /etc/hosts as Debian writes it, and as a host-network pod reads it: the hostname on 127.0.1.1
DEBIAN_HOSTS = {"localhost": "127.0.0.1", "node-a": "127.0.1.1", "node-b": "127.0.1.1", "node-c": "127.0.1.1"}
# the nodes' interfaces, the MPI link on 10.0.0.0/24 (under another name on node-c)
NODE_INTERFACES = {
    "node-a": {"lo": "127.0.0.1", "ens5": "10.0.0.7", "docker0": "172.17.0.1"},
    "node-b": {"lo": "127.0.0.1", "ens5": "10.0.0.8"},
    "node-c": {"lo": "127.0.0.1", "enp1s0": "10.0.0.9"},
}
MPI_INTERFACES = "KOMPI_MPI_INTERFACES"  # kompi:hostNetwork.mpiInterfaces, on every host-network pod
SETTINGS = ("MASTER_ADDR", "MASTER_PORT", "GLOO_SOCKET_IFNAME", MPI_INTERFACES)


@dataclass
class World:
    """What the stand-ins saw: rank 0's broadcast and each init_process_group call with gloo's interface then."""

    broadcast: list[object] = field(default_factory=list)
    joined: list[dict[str, Any]] = field(default_factory=list)


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    seen = World()
    torch = types.ModuleType("torch")
    torch.device = lambda *args: ("device", *args)  # type: ignore[attr-defined]
    torch.cuda = types.SimpleNamespace(is_available=lambda: False)  # type: ignore[attr-defined]
    distributed = types.ModuleType("torch.distributed")

    def init_process_group(backend: str, **kwargs: Any) -> None:
        import os

        seen.joined.append({"backend": backend, "gloo": os.environ.get("GLOO_SOCKET_IFNAME"), **kwargs})

    distributed.init_process_group = init_process_group  # type: ignore[attr-defined]
    torch.distributed = distributed  # type: ignore[attr-defined]
    mpi4py = types.ModuleType("mpi4py")

    def bcast(value: object, root: int) -> object:
        assert root == 0
        if value is not None or not seen.broadcast:  # rank 0 sends, every other rank gets what it sent
            seen.broadcast.append(value)
            return value
        return seen.broadcast[-1]

    mpi4py.MPI = types.SimpleNamespace(COMM_WORLD=types.SimpleNamespace(bcast=bcast))  # type: ignore[attr-defined]
    for name, module in (("torch", torch), ("torch.distributed", distributed), ("mpi4py", mpi4py)):
        monkeypatch.setitem(sys.modules, name, module)
    for name in SETTINGS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(socket, "gethostbyname", lambda name: DEBIAN_HOSTS[name])
    yield seen


def load_kompi_torch(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    return load_script(monkeypatch, "kompi_torch_under_test", KOMPI_TORCH)


def start_rank(
    monkeypatch: pytest.MonkeyPatch, node: str, rank: int, size: int = 3, local_size: int = 1, **env: str
) -> Any:
    """One rank of an `mpiexec` job on ``node``, as Open MPI starts it; kompi_torch's init_process_group's return."""
    monkeypatch.setattr(socket, "gethostname", lambda: node)
    for name, value in {
        "OMPI_COMM_WORLD_RANK": str(rank),
        "OMPI_COMM_WORLD_SIZE": str(size),
        "OMPI_COMM_WORLD_LOCAL_RANK": "0",
        "OMPI_COMM_WORLD_LOCAL_SIZE": str(local_size),
        "MASTER_PORT": str(PORT),
        **env,
    }.items():
        monkeypatch.setenv(name, value)
    for name in SETTINGS:
        if name not in env and name != "MASTER_PORT":
            monkeypatch.delenv(name, raising=False)
    module = load_kompi_torch(monkeypatch)
    monkeypatch.setattr(module, "_interfaces", lambda: NODE_INTERFACES[node], raising=False)
    return module.init_process_group()


HOST_NETWORK = {MPI_INTERFACES: "10.0.0.0/24"}


def test_on_the_host_network_rank_0_offers_its_address_on_the_mpi_interfaces_not_its_hosts_loopback(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    start_rank(monkeypatch, "node-a", 0, **HOST_NETWORK)
    start_rank(monkeypatch, "node-b", 1, **HOST_NETWORK)
    start_rank(monkeypatch, "node-c", 2, **HOST_NETWORK)
    # every rank dials node-a's address on the link, and gloo binds each rank to its own node's link interface
    assert [call["init_method"] for call in world.joined] == [f"tcp://10.0.0.7:{PORT}"] * 3, world.joined
    assert [call["gloo"] for call in world.joined] == ["ens5", "ens5", "enp1s0"]
    assert [(call["rank"], call["world_size"], call["backend"]) for call in world.joined] == [
        (0, 3, "gloo"),
        (1, 3, "gloo"),
        (2, 3, "gloo"),
    ]


def test_interface_names_take_the_first_one_that_the_node_has(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    names = {MPI_INTERFACES: "ib0,ens5,enp1s0"}
    start_rank(monkeypatch, "node-a", 0, **names)
    start_rank(monkeypatch, "node-c", 1, **names)
    assert [(call["init_method"], call["gloo"]) for call in world.joined] == [
        (f"tcp://10.0.0.7:{PORT}", "ens5"),
        (f"tcp://10.0.0.7:{PORT}", "enp1s0"),
    ]


def test_the_pod_network_is_unchanged_the_host_name_is_the_address(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(socket, "gethostbyname", {"train-worker-0": "10.244.1.5", "train-worker-1": "10.244.2.6"}.get)
    start_rank(monkeypatch, "train-worker-0", 0)
    start_rank(monkeypatch, "train-worker-1", 1)
    assert [(call["init_method"], call["gloo"]) for call in world.joined] == [(f"tcp://10.244.1.5:{PORT}", None)] * 2


def test_master_addr_and_gloo_socket_ifname_of_the_user_win(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    mine = {"MASTER_ADDR": "10.0.0.100", "GLOO_SOCKET_IFNAME": "ens5", **HOST_NETWORK}
    start_rank(monkeypatch, "node-a", 0, **mine)
    start_rank(monkeypatch, "node-b", 1, **mine)
    assert [(call["init_method"], call["gloo"]) for call in world.joined] == [(f"tcp://10.0.0.100:{PORT}", "ens5")] * 2


def test_gloo_socket_ifname_alone_gives_rank_0_that_interfaces_address(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    start_rank(monkeypatch, "node-a", 0, GLOO_SOCKET_IFNAME="ens5")
    assert [(call["init_method"], call["gloo"]) for call in world.joined] == [(f"tcp://10.0.0.7:{PORT}", "ens5")]


def test_a_loopback_address_for_ranks_on_several_hosts_is_refused_on_every_rank_at_once(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Neither kompi:hostNetwork's interfaces nor the user's settings: rank 0's host name on 127.0.1.1 would time
    out after 300 s; it fails at once, saying why and what to set."""
    for rank, node in enumerate(["node-a", "node-b"]):
        with pytest.raises(RuntimeError) as refused:
            start_rank(monkeypatch, node, rank, size=2)
        said = str(refused.value)
        assert "node-a" in said and "127.0.1.1" in said and "loopback" in said, said
        assert "MASTER_ADDR" in said and "GLOO_SOCKET_IFNAME" in said and "mpiexec -x" in said, said
    assert world.joined == []


def test_a_loopback_address_is_right_when_every_rank_is_on_rank_0s_host(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    start_rank(monkeypatch, "node-a", 0, size=2, local_size=2)
    start_rank(monkeypatch, "node-a", 1, size=2, local_size=2)
    assert [call["init_method"] for call in world.joined] == [f"tcp://127.0.1.1:{PORT}"] * 2


def test_a_node_without_any_of_the_mpi_interfaces_is_named_with_the_interfaces_it_has(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    start_rank(monkeypatch, "node-a", 0, **HOST_NETWORK)
    with pytest.raises(RuntimeError) as refused:
        start_rank(monkeypatch, "node-b", 1, **{MPI_INTERFACES: "192.168.0.0/16"})
    said = str(refused.value)
    assert "node-b" in said and "192.168.0.0/16" in said and "ens5 10.0.0.8" in said, said
    assert len(world.joined) == 1


def test_rank_0_without_any_of_the_mpi_interfaces_fails_every_rank(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = {MPI_INTERFACES: "192.168.0.0/16"}
    with pytest.raises(RuntimeError, match="node-a has no interface"):
        start_rank(monkeypatch, "node-a", 0, **elsewhere)
    with pytest.raises(RuntimeError, match=r"rank 0: node-a has no interface"):
        start_rank(monkeypatch, "node-b", 1, **HOST_NETWORK)


def test_this_hosts_interfaces_are_read_with_their_addresses(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    interfaces = load_kompi_torch(monkeypatch)._interfaces()
    assert interfaces.get("lo") == "127.0.0.1", interfaces


def test_the_variable_is_the_one_the_manifests_set(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    assert contract.ENV_MPI_INTERFACES == MPI_INTERFACES
    assert load_kompi_torch(monkeypatch).MPI_INTERFACES == MPI_INTERFACES
