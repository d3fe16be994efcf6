"""images/build.sh: tags follow <Open MPI version>-<base tag>-<kompi version>, unchanged inputs are not
rebuilt, and each image carries the contract's names and the MCA/PRRTE defaults that take effect."""

from __future__ import annotations

import re

import pytest

from kompi_components import contract
from tests.images.conftest import FLAVORS, run_build
from tests.images.podman import podman

pytestmark = pytest.mark.containers

# Parameter -> value each flavor's tools must report (read from the image, not from our files).
ORTE_SETTINGS = {
    "orte_keep_fqdn_hostnames": "true",
    "orte_default_hostfile": contract.HOSTFILE,
    "plm_rsh_agent": "ssh",
    "plm_rsh_args": f"-p {contract.SSH_PORT}",
    "plm_rsh_no_tree_spawn": "true",
    "oob_tcp_if_include": "eth0",
    "btl_tcp_if_include": "eth0",
    "btl_vader_single_copy_mechanism": "none",
}
PRRTE_SETTINGS = {
    "prte_keep_fqdn_hostnames": "1",
    "prte_default_hostfile": contract.HOSTFILE,
    "plm_ssh_agent": "ssh",
    "plm_ssh_args": f"-p {contract.SSH_PORT}",
    "plm_ssh_no_tree_spawn": "1",
    "oob_tcp_if_include": "eth0",
}


def run_in_image(image: str, script: str) -> str:
    """Run ``script`` in a throw-away container (default network: eth0 exists, as in a pod)."""
    result = podman("run", "--rm", "--entrypoint", "bash", image, "-c", script, check=False)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_unchanged_inputs_are_not_rebuilt(images: dict[str, str]) -> None:
    result = run_build(timeout=300)
    assert result.returncode == 0, result.stderr
    assert dict(line.split() for line in result.stdout.splitlines()) == images
    assert result.stderr.count("is up to date") == len(FLAVORS), result.stderr


@pytest.mark.parametrize("flavor", FLAVORS)
def test_tag_names_the_open_mpi_version_inside(images: dict[str, str], flavor: str) -> None:
    version = run_in_image(images[flavor], "ompi_info --version | head -n 1").split()[2].lstrip("v")
    assert images[flavor] == f"localhost/kompi:{version}-bookworm-{contract.KOMPI_VERSION}"
    assert version.startswith({"ompi4": "4.1.", "ompi5": "5.0."}[flavor])


@pytest.mark.parametrize("flavor", FLAVORS)
def test_image_user_entrypoints_and_ssh_client(images: dict[str, str], flavor: str) -> None:
    script = (
        "id -un; id -u; id -g; echo $HOME; "
        f"command -v {contract.WORKER_ENTRYPOINT} {contract.MASTER_ENTRYPOINT} {contract.READY_PROBE}; "
        "ls /etc/ssh/ssh_host_* 2>/dev/null | wc -l; "
        "python3 -c 'from mpi4py import MPI; print(MPI.Get_version())'; "
        "ssh -G some-worker.example | grep -E "
        "'^(port|stricthostkeychecking|userknownhostsfile|identityfile|batchmode) '"
    )
    lines = run_in_image(images[flavor], script).splitlines()
    assert lines[:4] == [contract.MPI_USER, str(contract.MPI_UID), str(contract.MPI_GID), contract.MPI_HOME]
    assert [line.rsplit("/", 1)[1] for line in lines[4:7]] == [
        contract.WORKER_ENTRYPOINT,
        contract.MASTER_ENTRYPOINT,
        contract.READY_PROBE,
    ]
    assert lines[7] == "0", "no host keys may be baked into the image"
    assert lines[8] == "(3, 1)"
    client = dict(line.split(" ", 1) for line in lines[9:])
    assert client["port"] == str(contract.SSH_PORT)
    assert client["stricthostkeychecking"] == "true"
    assert client["userknownhostsfile"] == f"{contract.SSH_SECRET_DIR}/{contract.SSH_KNOWN_HOSTS}"
    assert client["identityfile"] == f"~/.ssh/{contract.SSH_CLIENT_KEY}"
    assert client["batchmode"] == "yes"


def orte_values(image: str) -> dict[str, str]:
    output = run_in_image(image, "ompi_info --all --parsable")
    return dict(re.findall(r"^mca:[^:]+:[^:]+:param:([a-z_]+):value:(.*)$", output, re.MULTILINE))


def prrte_values(image: str) -> dict[str, str]:
    """prte_info's --parsable output is empty; read the wrapped text form instead."""
    output = " ".join(run_in_image(image, "prte_info --all").split())
    return dict(re.findall(r'"([a-z_]+)" \(current value: "([^"]*)"', output))


def test_open_mpi_4_reads_the_orte_defaults(images: dict[str, str]) -> None:
    values = orte_values(images["ompi4"])
    assert {key: values.get(key) for key in ORTE_SETTINGS} == ORTE_SETTINGS


def test_open_mpi_5_reads_the_prrte_defaults(images: dict[str, str]) -> None:
    values = prrte_values(images["ompi5"])
    assert {key: values.get(key) for key in PRRTE_SETTINGS} == PRRTE_SETTINGS
    assert orte_values(images["ompi5"]).get("btl_tcp_if_include") == "eth0"
