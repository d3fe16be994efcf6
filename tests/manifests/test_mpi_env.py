"""Ranks yield the CPU when a pod that runs them may have fewer CPUs than slots, and only then."""

from __future__ import annotations

from typing import Any

import pytest

from kompi_components.config import load_config
from kompi_components.manifests.cluster import build_cluster
from kompi_components.manifests.mpi_env import YIELD_WHEN_IDLE
from kompi_components.ssh_identity import placeholder_secret_data
from tests.stacks import as_config


def _env(values: dict[str, object]) -> list[dict[str, str]]:
    """Each kompi pod's env, master and workers."""
    objects = build_cluster(load_config(as_config(values)), placeholder_secret_data())
    return [
        {item["name"]: item["value"] for item in statefulset["spec"]["template"]["spec"]["containers"][0]["env"]}
        for statefulset in (item.manifest for item in (*objects.master, *objects.workers))
        if statefulset["kind"] == "StatefulSet"
    ]


def _cpu(cpu: str, *, limit: bool = False) -> dict[str, Any]:
    return {"resources": {"limits" if limit else "requests": {"cpu": cpu}}}


@pytest.mark.parametrize(
    ("values", "yields"),
    [
        ({}, True),  # no CPU request: the pod may share its cores
        ({"slotsPerWorker": 2, "workerPod": _cpu("1500m")}, True),
        ({"slotsPerWorker": 2, "workerPod": _cpu("2")}, False),
        ({"slotsPerWorker": 2, "workerPod": _cpu("4", limit=True)}, False),  # the request defaults to the limit
        ({"workerPod": _cpu("1"), "masterPod": {"compute": True}}, True),  # the compute master has none
        ({"workerPod": _cpu("1"), "masterPod": {"compute": True, **_cpu("1")}}, False),
        ({"workerPod": _cpu("1")}, False),  # a master that runs no ranks does not count
    ],
)
def test_yield_when_cpus_below_slots(values: dict[str, object], yields: bool) -> None:
    envs = _env(values)
    assert len(envs) == 2
    for env in envs:  # the same on every pod: mpiexec forwards the master's to every rank
        assert (env.get(YIELD_WHEN_IDLE) == "1") is yields


TORCH_NAMES = ("KOMPI_MPI_INTERFACES", "GLOO_SOCKET_IFNAME")


@pytest.mark.parametrize(
    ("interfaces", "expected"),
    [
        # one name is what gloo takes as it is; it would fail on a node that lacks one of several names, and
        # takes no CIDR block: kompi_torch then picks, on each rank, the first interface that the list names
        ("ens5", {"KOMPI_MPI_INTERFACES": "ens5", "GLOO_SOCKET_IFNAME": "ens5"}),
        ("ens5,ib0", {"KOMPI_MPI_INTERFACES": "ens5,ib0"}),
        ("10.0.0.0/16", {"KOMPI_MPI_INTERFACES": "10.0.0.0/16"}),
    ],
)
def test_host_network_pods_tell_torch_the_mpi_interfaces(interfaces: str, expected: dict[str, str]) -> None:
    """A host-network pod's host name may resolve to 127.0.1.1 (the node's /etc/hosts): rank 0's rendezvous
    address and gloo's interface come from kompi:hostNetwork.mpiInterfaces instead."""
    host_network = {"hostNetwork": {"enabled": True, "mpiInterfaces": interfaces}, "networkPolicy": {"enabled": False}}
    for env in _env(host_network):
        assert {name: env[name] for name in TORCH_NAMES if name in env} == expected
    for env in _env({}):  # the pod network: the host name is the pod's address, and gloo finds eth0 by it
        assert not set(TORCH_NAMES) & env.keys()
