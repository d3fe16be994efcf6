"""The README's first run on this machine: `bin/kompi up --stack dev --local --yes` with no local cluster running
starts one with a real node (this machine can run one: root, containerd), loads the stack's image into it,
and the firstJob it prints runs over both workers; `destroy --local` removes the stack."""

from __future__ import annotations

import json
import shlex
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from kompi_engine.cluster.local import LocalCluster
from kompi_engine.cluster.real_node import NODE_NAME
from tests.e2e.port_blocks import PortBlock
from tests.e2e.project import Project, started_by_up_local


@pytest.fixture
def first_run(node_engine_bin: Path, images: dict[str, str]) -> Iterator[tuple[LocalCluster, Project]]:
    """The repository's dev stack as it is, and the cluster its `up --local` starts. (A short directory:
    containerd's sockets under pytest's tmp_path pass the 104 characters a unix socket path may have.)"""
    with (
        tempfile.TemporaryDirectory(prefix="kompi-first-") as directory,
        started_by_up_local(node_engine_bin, Path(directory), PortBlock.FIRST_RUN) as started,
    ):
        yield started


def test_up_local_starts_a_real_node_and_first_job_runs(first_run: tuple[LocalCluster, Project]) -> None:
    cluster, project = first_run

    result = project.kompi("up", "--local", timeout=900)

    assert "(one real node)" in result.stderr, result.stderr[-2000:]
    assert "firstJob cannot run" not in result.stderr
    assert cluster.node.processes.running()
    out = project.last_json(result)
    first_job = shlex.split(out["firstJob"])
    assert first_job[0] == "kubectl"
    kubectl = [str(cluster.bin / "kubectl"), "--kubeconfig", str(cluster.kubeconfig)]
    job = subprocess.run([*kubectl, *first_job[1:]], capture_output=True, text=True, timeout=120, check=False)
    assert job.returncode == 0, job.stderr
    assert sorted(job.stdout.split()) == ["kompi-dev-worker-0", "kompi-dev-worker-1"]
    # the stack's image went into the node, and no other kompi image podman has
    node = json.loads(cluster.kubectl("get", "node", NODE_NAME, "-o", "json"))
    kompi_images = {name for image in node["status"]["images"] for name in image["names"] if "/kompi:" in name}
    assert kompi_images == {f"localhost/kompi:{project.config()['kompi:imageTag']}"}
