"""kompi:hostNetwork's refusals: each rule and each malformed interface list, as the exact line users get, before
anything is registered; the forms Open MPI takes pass."""

from __future__ import annotations

import pytest

from kompi_components.config import ConfigError, load_config
from kompi_components.config.namespaces import kompi_config
from tests.config.refusal import assert_program_refuses_before_registering, stack_config

ON = {"enabled": True, "mpiInterfaces": "ens5"}
# What host networking needs besides itself: no NetworkPolicy (on by default).
NO_POLICY = {"networkPolicy": {"enabled": False}}
FORMS = "interface names or IPv4 CIDR blocks, comma-separated without spaces (e.g. ens5 or bond0.100,10.0.0.0/16)"
NOT_A_NAME = (
    "is neither an interface name (a letter, then at most 14 letters, digits, '.', '_' or '-') nor an IPv4 CIDR"
)

CASES: dict[str, tuple[dict[str, object], str]] = {
    "without-interfaces": (
        {"hostNetwork": {"enabled": True}, **NO_POLICY},
        "kompi:hostNetwork.mpiInterfaces = <missing>: expected the nodes' interfaces for MPI with "
        "kompi:hostNetwork.enabled, such as ens5 or 10.0.0.0/16 (the image's eth0 is the pod's interface, which a "
        "node rarely has)",
    ),
    # networkPolicy.enabled is true by default: host networking is also an explicit opt-out of the fence.
    "with-the-default-network-policy": (
        {"hostNetwork": ON},
        "kompi:networkPolicy.enabled = true: expected false with kompi:hostNetwork.enabled: a NetworkPolicy cannot "
        "fence host-network pods (set kompi:networkPolicy.enabled to false with kompi:hostNetwork; docs/security.md)",
    ),
    "with-an-ssh-allow-list": (
        {"hostNetwork": ON, "networkPolicy": {"enabled": False, "sshAllowFrom": ["10.0.0.0/8"]}},
        'kompi:networkPolicy.sshAllowFrom = ["10.0.0.0/8"]: expected [] with kompi:hostNetwork.enabled: no '
        "NetworkPolicy applies to host-network pods (limit who reaches the nodes' port 2222 with the nodes' own "
        "firewall)",
    ),
    "with-a-compute-master": (
        {"hostNetwork": ON, **NO_POLICY, "masterPod": {"compute": True}},
        "kompi:masterPod.compute = true: expected false with kompi:hostNetwork.enabled: the master lists itself in "
        "the hostfile by its hostname, which on the host network is the node's",
    ),
    "as-root": (
        {"hostNetwork": ON, **NO_POLICY, "runAsRoot": True},
        "kompi:runAsRoot = true: expected false with kompi:hostNetwork.enabled: root pods keep the runtime's default "
        "capabilities (NET_RAW among them), which on the node's network reach the node's own traffic",
    ),
    "interfaces-with-a-space": (
        {"hostNetwork": {"mpiInterfaces": "ens5, ens6"}},
        f"kompi:hostNetwork.mpiInterfaces = \"ens5, ens6\": expected {FORMS}: ' ens6' {NOT_A_NAME} block",
    ),
    "interfaces-empty": (
        {"hostNetwork": {"mpiInterfaces": ""}},
        f'kompi:hostNetwork.mpiInterfaces = "": expected {FORMS}: an empty entry',
    ),
    "interfaces-trailing-comma": (
        {"hostNetwork": {"mpiInterfaces": "ens5,"}},
        f'kompi:hostNetwork.mpiInterfaces = "ens5,": expected {FORMS}: an empty entry',
    ),
    "interface-name-too-long": (
        {"hostNetwork": {"mpiInterfaces": "enp65s0f1np1xyz0"}},
        f"kompi:hostNetwork.mpiInterfaces = \"enp65s0f1np1xyz0\": expected {FORMS}: 'enp65s0f1np1xyz0' {NOT_A_NAME} "
        "block",
    ),
    # Open MPI takes an entry that starts with a digit for a CIDR block.
    "interface-name-digit-first": (
        {"hostNetwork": {"mpiInterfaces": "5ens"}},
        f"kompi:hostNetwork.mpiInterfaces = \"5ens\": expected {FORMS}: '5ens' {NOT_A_NAME} block",
    ),
    "interface-alias": (
        {"hostNetwork": {"mpiInterfaces": "eth0:1"}},
        f"kompi:hostNetwork.mpiInterfaces = \"eth0:1\": expected {FORMS}: 'eth0:1' {NOT_A_NAME} block",
    ),
    "address-without-prefix": (
        {"hostNetwork": {"mpiInterfaces": "10.0.0.1"}},
        f"kompi:hostNetwork.mpiInterfaces = \"10.0.0.1\": expected {FORMS}: '10.0.0.1' has no /prefix length",
    ),
    "prefix-too-long": (
        {"hostNetwork": {"mpiInterfaces": "ens5,10.0.0.0/33"}},
        f"kompi:hostNetwork.mpiInterfaces = \"ens5,10.0.0.0/33\": expected {FORMS}: '10.0.0.0/33' {NOT_A_NAME} block",
    ),
    "ipv6-block": (
        {"hostNetwork": {"mpiInterfaces": "fd00::/64"}},
        f"kompi:hostNetwork.mpiInterfaces = \"fd00::/64\": expected {FORMS}: 'fd00::/64' is IPv6: Open MPI selects "
        "interfaces by IPv4 blocks only (name the interface instead)",
    ),
    "interfaces-not-a-string": (
        {"hostNetwork": {"mpiInterfaces": ["ens5"]}},
        'kompi:hostNetwork.mpiInterfaces = ["ens5"]: expected a string',
    ),
}


@pytest.mark.parametrize(("values", "line"), CASES.values(), ids=CASES.keys())
def test_refused_with_exactly_this_line(values: dict[str, object], line: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(kompi_config(stack_config(values)))
    assert str(caught.value) == f"invalid config {line}"


@pytest.mark.parametrize(("values", "line"), CASES.values(), ids=CASES.keys())
def test_the_program_refuses_before_registering_anything(values: dict[str, object], line: str) -> None:
    assert_program_refuses_before_registering(values, line)


@pytest.mark.parametrize(
    "interfaces", ["eth0", "ens5f0", "bond0.100", "br-ex", "ib0", "10.0.0.0/16", "10.1.2.3/8", "ens5,ens6,10.0.0.0/8"]
)
def test_names_and_ipv4_blocks_pass(interfaces: str) -> None:
    config = load_config(
        kompi_config(stack_config({"hostNetwork": {"enabled": True, "mpiInterfaces": interfaces}, **NO_POLICY}))
    )
    assert config.host_network.enabled
    assert config.host_network.mpi_interfaces == interfaces


def test_off_by_default_and_off_asks_for_nothing() -> None:
    default = load_config({}).host_network
    assert (default.enabled, default.mpi_interfaces) == (False, None)
    # The network policy and a compute master are fine on the pod network, interfaces given or not.
    config = load_config(
        kompi_config(stack_config({"hostNetwork": {"mpiInterfaces": "ens5"}, "masterPod": {"compute": True}}))
    )
    assert config.network_policy.enabled and not config.host_network.enabled
