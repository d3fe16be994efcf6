"""The data workflow in real containers: kompi's rendered Job prepares a sharded dataset on a claim,
then master + 3 workers (kompi's rendered pods, the claim read-only) run an MPI job in which every
rank checks its own shard and an allreduce checks the totals against the manifest's checksums.

A claim is a host directory bind-mounted where the pods mount it (tests/data/podman_claims.py); the
Job runs once (restartPolicy Never) and must exit 0 before any MPI pod starts, as `pulumi up` orders it.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from kompi_components.config import load_config
from kompi_components.manifests.cluster import ClusterObjects, build_cluster
from kompi_components.naming import Names, cluster_names
from kompi_components.ssh_identity import SEED_BYTES, identity_files
from tests.data.podman_claims import claims_as_binds, pod_without_claims, provision
from tests.images.cluster import RenderedCluster, RunningCluster, running_cluster, secret_files, statefulset_pods
from tests.images.conftest import container_tools, images
from tests.images.pod_like import PodPlacement, run_pod_like
from tests.images.podman import exec_in, logs, network, podman, unique
from tests.stacks import REPO, as_config

__all__ = ["container_tools", "images"]  # the images fixtures: build once, or reuse when unchanged
pytestmark = pytest.mark.containers

WORKERS = 3
SHARDS = WORKERS  # one shard per rank
VALUES = 50_000  # 400 kB per shard: small, CI has 2 cores
SCRIPT_DIR = "/kompi-examples"
SCRIPT = f"{SCRIPT_DIR}/sharded_dataset.py"
DATA = "/datasets"
CLAIM = "data-data-train"
JOB_TIMEOUT = 120


def data_config(image: str) -> dict[str, Any]:
    repository, tag = image.rsplit(":", 1)
    return {
        "clusterName": "data",
        "namespace": "hpc",
        "workers": WORKERS,
        "image": repository,
        "imageTag": tag,
        "imagePullPolicy": "Never",
        "dataVolumes": [{"name": "train", "size": "1Gi", "mountPath": DATA}],
        "dataPreparation": {
            "command": ["python3", SCRIPT, "prepare", "--out", DATA],
            "env": {"SHARDS": str(SHARDS), "VALUES": str(VALUES), "SEED": "7"},
        },
    }


def render(image: str) -> tuple[Names, ClusterObjects]:
    """kompi's objects for ``data_config``, with fresh SSH keys."""
    config = load_config(as_config(data_config(image)))
    names = cluster_names(config)
    files = identity_files(os.urandom(SEED_BYTES), os.urandom(SEED_BYTES), names.cluster, names.known_host_patterns())
    return names, build_cluster(config, files.as_secret_data())


@pytest.fixture
def example_mount(tmp_path: Path) -> str:
    """examples/, readable by the pods' user (kompi:appCode or the image would bring it in a real cluster)."""
    code = tmp_path / "examples"
    code.mkdir()
    shutil.copy(REPO / "examples" / "sharded_dataset.py", code)
    code.chmod(0o755)
    (code / "sharded_dataset.py").chmod(0o644)
    return f"type=bind,source={code},destination={SCRIPT_DIR},ro=true"


@pytest.fixture
def claims(tmp_path: Path) -> dict[str, Path]:
    return {CLAIM: provision(tmp_path / "claims", CLAIM, fs_group=1000)}


def run_job(job: dict[str, Any], claim_dirs: dict[str, Path], scratch: Path, example: str) -> tuple[int, str]:
    """The Job's pod, once (restartPolicy Never); returns its exit code and logs."""
    pod_spec = {k: v for k, v in job["spec"]["template"]["spec"].items() if k != "restartPolicy"}
    spec, binds = claims_as_binds(pod_spec, claim_dirs)
    with network("kompi-data") as net:
        placement = PodPlacement(unique("kompi-prepare"), job["metadata"]["name"], net, net.address(10))
        name = run_pod_like(spec, spec["containers"][0], {}, placement, scratch, [*binds, example])
        code = int(podman("wait", name, timeout=JOB_TIMEOUT).stdout.strip())
        return code, logs(name)


def mpi_cluster(
    names: Names, objects: ClusterObjects, claim_dirs: dict[str, Path]
) -> tuple[RenderedCluster, list[str]]:
    """kompi's master and workers with their claims as bind mounts (the same ones on every pod)."""
    (master,) = statefulset_pods(objects.master[0].manifest, names)
    master, binds = pod_without_claims(master, claim_dirs)
    workers = []
    for pod in statefulset_pods(objects.workers[0].manifest, names):
        worker, worker_binds = pod_without_claims(pod, claim_dirs)
        assert worker_binds == binds
        workers.append(worker)
    return RenderedCluster(names, secret_files([item.manifest for item in objects.ssh]), workers, master), binds


def write_hostfile(cluster: RunningCluster) -> None:
    text = "".join(f"{pod.fqdn} slots=1\n" for pod in cluster.rendered.workers)
    result = exec_in(cluster.master, ["sh", "-c", 'cat > "$KOMPI_HOSTFILE"'], stdin=text)
    assert result.returncode == 0, result.stderr


def run_check(cluster: RunningCluster) -> tuple[int, list[dict[str, Any]], str]:
    result = exec_in(cluster.master, ["mpiexec", "python3", SCRIPT, "check", "--data", DATA], timeout=180)
    reports = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    return result.returncode, sorted(reports, key=lambda r: int(r["rank"])), result.stderr


@pytest.mark.parametrize("flavor", ["ompi4", "ompi5"])
def test_prepared_shards_are_checked_by_every_rank_with_an_allreduce(
    images: dict[str, str], flavor: str, claims: dict[str, Path], example_mount: str, tmp_path: Path
) -> None:
    names, objects = render(images[flavor])
    (job,) = [item.manifest for item in objects.preparation]

    start = time.monotonic()
    code, job_logs = run_job(job, claims, tmp_path / "job", example_mount)
    job_seconds = time.monotonic() - start
    assert code == 0, job_logs
    data_dir = claims[CLAIM]
    manifest = json.loads((data_dir / "manifest.json").read_text())
    assert manifest["shards"] == SHARDS
    assert {path.stat().st_uid for path in data_dir.iterdir()} == {1000}  # written as the pods' user

    rendered, binds = mpi_cluster(names, objects, claims)
    assert binds == [f"type=bind,source={data_dir},destination={DATA},ro=true"]
    start = time.monotonic()
    with running_cluster(rendered, tmp_path / "pods", extra_mounts=[*binds, example_mount]) as cluster:
        write_hostfile(cluster)
        code, reports, stderr = run_check(cluster)
        check_seconds = time.monotonic() - start
        assert code == 0, f"{reports}\n{stderr}"
        assert [r["rank"] for r in reports] == list(range(WORKERS))
        assert [r["hostname"] for r in reports] == [pod.name for pod in rendered.workers]
        assert [r["shards"] for r in reports] == [[f"shard-{rank:05d}.bin"] for rank in range(WORKERS)]
        assert all(r["ok"] and r["total"] == manifest["total"] for r in reports)

        # The MPI pods cannot change the prepared data: the claim is mounted read-only.
        write = exec_in(cluster.container(rendered.workers[0].name), ["touch", f"{DATA}/x"])
        assert write.returncode != 0
        assert "Read-only file system" in write.stderr

        # A damaged shard is found by the rank that owns it, and the job fails on every rank.
        shard = data_dir / "shard-00001.bin"
        raw = bytearray(shard.read_bytes())
        raw[0] ^= 0xFF
        shard.write_bytes(bytes(raw))
        code, reports, _ = run_check(cluster)
        assert code != 0
        assert [r["bad"] for r in reports] == [[], ["shard-00001.bin"], []]
        assert not any(r["ok"] for r in reports)
    print(f"\nprepare: {job_seconds:.1f}s; cluster ready + check: {check_seconds:.1f}s")
