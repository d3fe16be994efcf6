"""kompi:hostNetwork: master, workers and the one-shot master on the nodes' network, each built part as expected,
everything else as on the pod network; off, the objects are exactly those of a stack without the key."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kompi_components import contract
from kompi_components.manifests import queue
from kompi_components.render import render_objects
from tests.data.configs import EVERY_FEATURE_WITH_DATA
from tests.k8s_schema import validate
from tests.stacks import EVERY_FEATURE, ONE_SHOT, as_config

INTERFACES = "10.0.0.0/16,ens5"
# What host networking needs besides itself (config/checks.py): no NetworkPolicy, no compute master.
OFF: dict[str, Any] = {"networkPolicy": {"enabled": False}, "hostNetwork": {"mpiInterfaces": INTERFACES}}
ON: dict[str, Any] = OFF | {"hostNetwork": {"enabled": True, "mpiInterfaces": INTERFACES}}
HOST_NETWORK_READY = EVERY_FEATURE | {"masterPod": EVERY_FEATURE["masterPod"] | {"compute": False}}  # type: ignore[operator]
STACKS = {
    "defaults": {},
    "every-feature": HOST_NETWORK_READY,
    "one-shot": ONE_SHOT,
    "data": EVERY_FEATURE_WITH_DATA | {"masterPod": {"compute": False}},
}
INTERFACE_ENV = [
    {"name": "OMPI_MCA_btl_tcp_if_include", "value": INTERFACES},
    {"name": "OMPI_MCA_oob_tcp_if_include", "value": INTERFACES},
    {"name": "PRTE_MCA_oob_tcp_if_include", "value": INTERFACES},
    {"name": "NCCL_SOCKET_IFNAME", "value": "^lo,docker"},  # a CIDR block among them: NCCL takes only names
    # for PyTorch (kompi_torch): rank 0's address and gloo's interface; no GLOO_SOCKET_IFNAME, which takes one name
    {"name": "KOMPI_MPI_INTERFACES", "value": INTERFACES},
]


def _render(stack: dict[str, Any], host_network: dict[str, Any]) -> dict[str, dict[str, Any]]:
    # (``host_network`` replaces the stack's networkPolicy: every-feature's sshAllowFrom goes too)
    return {f"{m['kind']}/{m['metadata']['name']}": m for m in render_objects(as_config(stack | host_network))}


def _on_the_node_network(template: dict[str, Any], *, ssh: bool) -> dict[str, Any]:
    """``template`` (as rendered without hostNetwork) with what hostNetwork should add to an MPI pod."""
    expected = copy.deepcopy(template)
    spec = expected["spec"]
    spec["hostNetwork"] = True
    spec["dnsPolicy"] = "ClusterFirstWithHostNet"
    (container,) = spec["containers"]
    env = container["env"]
    # After the pod's own env, before what the one-shot Job adds to it (the worker count first).
    names = [entry["name"] for entry in env]
    at = names.index(contract.ENV_WORKERS) if contract.ENV_WORKERS in names else len(env)
    env[at:at] = INTERFACE_ENV
    if ssh:
        assert container["ports"] == [{"name": "ssh", "containerPort": 2222, "protocol": "TCP"}]
        container["ports"] = [{"name": "ssh", "containerPort": 2222, "hostPort": 2222, "protocol": "TCP"}]
    else:
        assert "ports" not in container
    return expected


@pytest.mark.parametrize("stack", STACKS.values(), ids=STACKS.keys())
def test_off_renders_exactly_the_objects_of_a_stack_without_the_key(stack: dict[str, Any]) -> None:
    without = {key: value for key, value in stack.items() if key != "hostNetwork"}
    assert render_objects(as_config(stack | {"hostNetwork": {"mpiInterfaces": INTERFACES}})) == render_objects(
        as_config(without)
    )


@pytest.mark.parametrize("stack", STACKS.values(), ids=STACKS.keys())
def test_the_mpi_pods_join_the_node_network_and_nothing_else_changes(stack: dict[str, Any]) -> None:
    off, on = _render(stack, OFF), _render(stack, ON)
    assert on.keys() == off.keys()
    mpi_pods = set()
    for name, before in off.items():
        after = on[name]
        kind = before["kind"]
        if kind in ("StatefulSet", "Job") and after["spec"]["template"]["metadata"]["labels"].get(
            "app.kubernetes.io/component"
        ) in ("master", "worker"):
            mpi_pods.add(name)
            expected = copy.deepcopy(before)
            # The one-shot master (a Job) runs no sshd: no port, so no hostPort.
            expected["spec"]["template"] = _on_the_node_network(before["spec"]["template"], ssh=kind == "StatefulSet")
            labels = before["spec"]["template"]["metadata"]["labels"]
            labels_after = after["spec"]["template"]["metadata"]["labels"]
            if queue.GROUP_LABEL in labels:  # a queued one-shot run's changed pods are a new run: a new group
                one_shot = bool(stack.get("oneShot", {}).get("enabled"))
                assert (labels_after[queue.GROUP_LABEL] != labels[queue.GROUP_LABEL]) == one_shot, name
                expected["spec"]["template"]["metadata"]["labels"][queue.GROUP_LABEL] = labels_after[queue.GROUP_LABEL]
            assert after == expected, name
        elif kind == "Namespace":
            labels = before["metadata"]["labels"] | {
                "pod-security.kubernetes.io/enforce": "privileged",
                "pod-security.kubernetes.io/warn": "privileged",
            }
            assert after == before | {"metadata": before["metadata"] | {"labels": labels}}
        else:  # the data-preparation Job included: it runs no MPI and stays on the pod network (and does not rerun)
            assert after == before, name
    roles = {name.split("-")[-1] for name in mpi_pods}
    assert roles == {"master", "worker"}, mpi_pods


def test_the_ssh_host_port_is_the_container_port_as_the_api_server_requires_with_host_network() -> None:
    objects = _render({}, ON)
    for name in ("StatefulSet/kompi-master", "StatefulSet/kompi-worker"):
        (container,) = objects[name]["spec"]["template"]["spec"]["containers"]
        (port,) = container["ports"]
        assert port["hostPort"] == port["containerPort"] == contract.SSH_PORT


@pytest.mark.parametrize("stack", STACKS.values(), ids=STACKS.keys())
def test_host_network_objects_are_schema_valid(stack: dict[str, Any]) -> None:
    for manifest in _render(stack, ON).values():
        validate(manifest)


def test_the_data_preparation_job_stays_on_the_pod_network() -> None:
    off, on = _render(STACKS["data"], OFF), _render(STACKS["data"], ON)
    (name,) = [name for name in on if name.startswith("Job/") and "-prepare-" in name]
    assert on[name] == off[name]  # the same name too: the Job does not rerun
    assert "hostNetwork" not in on[name]["spec"]["template"]["spec"]


@pytest.mark.parametrize(
    ("interfaces", "nccl"),
    [
        ("ens5", "=ens5"),  # exact names: NCCL otherwise takes a name as a prefix (ens5 would match ens50)
        ("bond0.100,ens5", "=bond0.100,ens5"),
        ("10.0.0.0/16", "^lo,docker"),
        ("ens5,10.0.0.0/16", "^lo,docker"),  # not only ens5: the block may be on another interface
    ],
)
def test_nccl_gets_the_node_interfaces_where_it_can_name_them(interfaces: str, nccl: str) -> None:
    objects = _render({}, OFF | {"hostNetwork": {"enabled": True, "mpiInterfaces": interfaces}})
    for name in ("StatefulSet/kompi-master", "StatefulSet/kompi-worker"):
        (container,) = objects[name]["spec"]["template"]["spec"]["containers"]
        env = {entry["name"]: entry.get("value") for entry in container["env"]}
        assert env["NCCL_SOCKET_IFNAME"] == nccl, name
        assert env["OMPI_MCA_btl_tcp_if_include"] == interfaces, name
