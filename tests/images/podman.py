"""A thin podman client for the image tests: every call runs with tests/images/containers.conf."""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent.parent
CONTAINERS_CONF = HERE / "containers.conf"


class PodmanError(RuntimeError):
    pass


def podman_env() -> dict[str, str]:
    return {**os.environ, "CONTAINERS_CONF": str(CONTAINERS_CONF)}


def podman_path() -> str | None:
    return shutil.which("podman")


def podman(
    *args: str, check: bool = True, timeout: float = 300, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``podman ARGS``; raises PodmanError with stderr when ``check`` and it fails."""
    result = subprocess.run(
        ["podman", *args], capture_output=True, text=True, env=podman_env(), timeout=timeout, input=stdin, check=False
    )
    if check and result.returncode != 0:
        raise PodmanError(f"podman {' '.join(args)} exited {result.returncode}:\n{result.stderr}")
    return result


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@dataclass(frozen=True)
class Network:
    name: str
    subnet: str

    def address(self, host: int) -> str:
        """The ``host``-th address of the network's /24 (the tests create at most a few containers)."""
        prefix = self.subnet.split("/")[0].rsplit(".", 1)[0]
        return f"{prefix}.{host}"


@contextmanager
def network(prefix: str = "kompi-test") -> Iterator[Network]:
    """A private podman network for one test, removed with its containers afterwards."""
    name = unique(prefix)
    podman("network", "create", name)
    try:
        subnet = podman("network", "inspect", "--format", "{{range .Subnets}}{{.Subnet}}{{end}}", name).stdout.strip()
        if not subnet.endswith("/24"):
            raise PodmanError(f"expected a /24 for network {name}, got {subnet!r}")
        yield Network(name, subnet)
    finally:
        remove_network(name)


def remove_network(name: str) -> None:
    ids = podman("ps", "-aq", "--filter", f"network={name}", check=False).stdout.split()
    if ids:
        podman("rm", "-f", "-t", "0", *ids, check=False)
    podman("network", "rm", "-f", name, check=False)


def exec_in(
    container: str,
    command: Sequence[str],
    *,
    user: str | None = None,
    timeout: float = 120,
    stdin: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """``podman exec`` without raising: the tests look at exit code and output."""
    args = ["exec", "-i"] if stdin is not None else ["exec"]
    if user is not None:
        args += ["--user", user]
    return podman(*args, container, *command, check=False, timeout=timeout, stdin=stdin)


def logs(container: str) -> str:
    result = podman("logs", container, check=False)
    return result.stdout + result.stderr
