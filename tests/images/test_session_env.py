"""The environment that kompi-lib.sh hands to ssh sessions (sshd's SetEnv line), and so to every rank that
`mpiexec` starts on another pod: run on the host with bash, no container (tests/images/test_mpi_cluster.py checks
the line in real pods)."""

from __future__ import annotations

import shlex
import subprocess

from tests.images.podman import REPO_ROOT

KOMPI_LIB = REPO_ROOT / "images" / "scripts" / "kompi-lib.sh"


def setenv_line(env: dict[str, str]) -> str:
    """kompi_setenv_line's output in a shell whose environment is ``env`` alone."""
    script = f". {shlex.quote(str(KOMPI_LIB))} && kompi_setenv_line"
    result = subprocess.run(
        ["env", "-i", *(f"{name}={value}" for name, value in env.items()), "/bin/bash", "-c", script],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    return result.stdout.strip()


def test_torch_rendezvous_and_gloo_settings_reach_the_ranks_on_other_pods() -> None:
    """A host-network pod's gloo interface and a user's rendezvous address must reach every rank, as NCCL's do."""
    line = setenv_line(
        {
            "PATH": "/usr/bin:/bin",
            "GLOO_SOCKET_IFNAME": "ens5",
            "MASTER_ADDR": "10.0.0.7",
            "MASTER_PORT": "29500",
            "KOMPI_MPI_INTERFACES": "10.0.0.0/24",
            "NCCL_SOCKET_IFNAME": "=ens5",
        }
    )
    assert line == (
        'SetEnv GLOO_SOCKET_IFNAME="ens5" KOMPI_MPI_INTERFACES="10.0.0.0/24" MASTER_ADDR="10.0.0.7" '
        'MASTER_PORT="29500" NCCL_SOCKET_IFNAME="=ens5" PATH="/usr/bin:/bin"'
    )


def test_other_variables_and_mangled_values_stay_out() -> None:
    line = setenv_line(
        {
            "PATH": "/usr/bin:/bin",
            "HOSTNAME": "node-a",
            "MASTER_ADDRESS": "10.0.0.7",  # not torch's name
            "XGLOO_SOCKET_IFNAME": "ens5",
            "GLOO_QUOTED": 'a"b',  # a quote would break sshd's line: left out
        }
    )
    assert line == 'SetEnv PATH="/usr/bin:/bin"'
