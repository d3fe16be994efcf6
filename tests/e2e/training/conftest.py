"""A local cluster with one real node that runs the training image, for this package (tests/e2e/training).

The image is about 6 GB: loading it into the node's containerd takes about two minutes, so it goes into a
node of its own, held for this package only, and not into the node of tests/e2e/node.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from kompi_engine.cluster.local import LocalCluster
from tests.e2e.live import Kubectl
from tests.e2e.port_blocks import PortBlock
from tests.e2e.running import running
from tests.images.conftest import built, container_tools  # noqa: F401  (fixture: podman and buildah are there)

FLAVOR = "ompi5-torch"
# a rank imports torch (about 400 MB resident): room for one rank per worker; the master only launches
TRAINING_POD = {"resources": {"requests": {"cpu": "100m", "memory": "256Mi"}, "limits": {"memory": "2Gi"}}}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if Path(__file__).parent in item.path.parents:
            item.add_marker(pytest.mark.containers)  # kompi's training image runs here


@pytest.fixture(scope="package")
def training_image(container_tools: None) -> str:  # noqa: F811
    """The Open MPI 5 training image (built, or reused when unchanged)."""
    return built((FLAVOR,))[FLAVOR]


@pytest.fixture(scope="package")
def training_cluster(
    node_engine_bin: Path, training_image: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LocalCluster]:
    state = tmp_path_factory.mktemp("training-node-cluster")
    local = LocalCluster(
        state=state, bin=node_engine_bin, ports=PortBlock.TRAINING.ports, real_node=True, node_images=(training_image,)
    )
    try:
        with running(local, print):
            yield local
    finally:
        # containerd's copy of the image (12 GB: its layers and their snapshot) goes too; pytest would keep it
        # with its last three runs' temporary directories
        shutil.rmtree(state, ignore_errors=True)


@pytest.fixture(scope="package")
def training_kubectl(training_cluster: LocalCluster) -> Kubectl:
    return Kubectl(training_cluster.bin / "kubectl", training_cluster.kubeconfig)
