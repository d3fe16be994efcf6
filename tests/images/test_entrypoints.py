"""kompi-worker, kompi-master and kompi-ready: sshd is pid 1 and stops promptly, the readiness probe
wants a real SSH banner, and a pod that cannot read its Secret fails with a message saying why."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from kompi_components import contract
from tests.images.cluster import render_cluster, running_cluster
from tests.images.pod_like import PodPlacement, run_pod_like
from tests.images.podman import exec_in, logs, podman, unique

pytestmark = pytest.mark.containers

# Listeners on the SSH port that are not sshd: one never speaks, one speaks HTTP.
SILENT = "import socket; s = socket.create_server(('127.0.0.1', {port})); kept = [s.accept() for _ in iter(int, 1)]"
WRONG_BANNER = (
    "import socket; s = socket.create_server(('127.0.0.1', {port}))\n"
    "while True:\n    c, _ = s.accept(); c.sendall(b'HTTP/1.1 400 Bad Request\\r\\n'); c.close()"
)


def start_listener(image: str, program: str) -> str:
    name = unique("kompi-listener")
    code = program.format(port=contract.SSH_PORT)
    podman("run", "-d", "--name", name, "--network", "none", "--entrypoint", json.dumps(["python3", "-c", code]), image)
    return name


def wait_listening(container: str, timeout: float = 20) -> None:
    connect = f"exec 3<>/dev/tcp/127.0.0.1/{contract.SSH_PORT}"
    deadline = time.monotonic() + timeout
    while exec_in(container, ["bash", "-c", connect]).returncode != 0:
        assert time.monotonic() < deadline, logs(container)
        time.sleep(0.1)


def timed_probe(container: str) -> tuple[int, float]:
    """The probe's exit code and its own time, taken inside the container: `podman exec` itself took over 5 s
    on a loaded machine, while the probe had answered at once."""
    timed = f's=$EPOCHREALTIME; {contract.READY_PROBE}; c=$?; echo "$c $s $EPOCHREALTIME"'
    result = exec_in(container, ["bash", "-c", timed], timeout=30)
    code, started, ended = result.stdout.split()
    return int(code), float(ended) - float(started)


@pytest.mark.parametrize("program", [SILENT, WRONG_BANNER], ids=["silent", "http"])
def test_ready_probe_wants_an_ssh_banner(images: dict[str, str], program: str) -> None:
    container = start_listener(images["ompi4"], program)
    try:
        wait_listening(container)
        code, seconds = timed_probe(container)
    finally:
        podman("rm", "-f", "-t", "0", container, check=False)
    assert code != 0
    assert seconds < 5


def test_ready_probe_fails_fast_without_a_listener(images: dict[str, str]) -> None:
    start = time.monotonic()
    result = podman(
        "run", "--rm", "--network", "none", "--entrypoint", contract.READY_PROBE, images["ompi5"], check=False
    )
    assert result.returncode != 0
    assert time.monotonic() - start < 10


def test_master_and_worker_serve_ssh_and_stop_promptly(images: dict[str, str], tmp_path: Path) -> None:
    rendered = render_cluster(images["ompi5"], workers=1, run_as_root=False)
    with running_cluster(rendered, tmp_path) as cluster:
        worker = cluster.container(rendered.workers[0].name)
        ready = [exec_in(name, [contract.READY_PROBE]).returncode for name in (worker, cluster.master)]
        worker_log = logs(worker)
        master_log = logs(cluster.master)
        start = time.monotonic()
        podman("stop", "-t", "20", worker)
        stop_seconds = time.monotonic() - start
    assert ready == [0, 0]
    # The probe identifies itself, so sshd logs one "closed [preauth]" line, not a kex error too.
    assert "kex_exchange_identification" not in worker_log
    assert "Connection closed by 127.0.0.1" in worker_log
    assert f"starting sshd on port {contract.SSH_PORT} as {contract.MPI_USER}" in master_log
    # sshd itself is pid 1 and exits on SIGTERM; a shell in between would sit out the 20 s timeout.
    assert stop_seconds < 5


def test_pod_that_cannot_read_the_secret_fails_clearly(images: dict[str, str], tmp_path: Path) -> None:
    rendered = render_cluster(images["ompi4"], workers=1, run_as_root=False)
    pod = rendered.workers[0]
    context = {key: value for key, value in pod.spec["securityContext"].items() if key != "fsGroup"}
    spec = {**pod.spec, "securityContext": context}
    with_network = running_cluster(rendered, tmp_path / "cluster")
    with with_network as cluster:
        place = PodPlacement(unique("kompi-no-fsgroup"), pod.name, cluster.network, cluster.network.address(99))
        name = run_pod_like(spec, pod.container, rendered.secrets, place, tmp_path / "pod")
        exit_code = podman("wait", name, timeout=60).stdout.strip()
        output = logs(name)
    assert exit_code != "0"
    assert f"cannot read {contract.SSH_SECRET_DIR}/{contract.SSH_CLIENT_KEY}" in output
    assert "fsGroup" in output
