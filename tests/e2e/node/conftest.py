"""A local cluster with one real node (kubelet, containerd, runc) running kompi's images, for this package
(tests/e2e/node): stopped after it, so that it neither holds its network namespace while a later test runs nor
shares the machine's two cores with the three-node cluster of tests/e2e/nodes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kompi_engine.cluster.local import LocalCluster
from tests.e2e.live import Kubectl, wait_until
from tests.e2e.port_blocks import PortBlock
from tests.e2e.project import Project
from tests.e2e.running import running
from tests.images.conftest import container_tools, images  # noqa: F401  (fixtures: build kompi's images)

# one node with two CPUs runs the master and up to three workers: ask for little
SMALL_POD = {"resources": {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"memory": "1Gi"}}}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if Path(__file__).parent in item.path.parents:
            item.add_marker(pytest.mark.containers)  # kompi's images run here


@pytest.fixture(scope="package")
def real_cluster(
    node_engine_bin: Path,
    images: dict[str, str],  # noqa: F811
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[LocalCluster]:
    local = LocalCluster(
        state=tmp_path_factory.mktemp("real-node-cluster"),
        bin=node_engine_bin,
        ports=PortBlock.REAL_NODE_SESSION.ports,
        real_node=True,
        node_images=tuple(images.values()),
        kueue=True,  # for the queued one-shot run (test_jobs.py); pods without a queue label are not Kueue's
    )
    with running(local, print):
        yield local


@pytest.fixture(scope="package")
def node_kubectl(real_cluster: LocalCluster) -> Kubectl:
    return Kubectl(real_cluster.bin / "kubectl", real_cluster.kubeconfig)


@pytest.fixture
def node_project(real_cluster: LocalCluster, tmp_path: Path) -> Iterator[Callable[..., Project]]:
    """Copies of stacks sized for the one node; destroyed afterwards, also when a test failed."""
    made: list[Project] = []

    def make(stack: str, image_tag: str, directory: str | None = None, **settings: object) -> Project:
        project = Project.copy_of(stack, tmp_path / (directory or stack), real_cluster.kubeconfig)
        project.set(imageTag=image_tag, masterPod=SMALL_POD, workerPod=SMALL_POD, **settings)
        made.append(project)
        return project

    yield make
    for project in made:
        project.kompi("destroy", check=False)


@pytest.fixture
def stack_namespace(node_kubectl: Kubectl) -> Iterator[Callable[[str], str]]:
    """Namespaces made before the stack (kompi:createNamespace false), for Secrets its pods need from the start;
    deleted afterwards. (Ask for it before node_project, so that it goes after the stack is destroyed.)"""
    made: list[str] = []

    def make(name: str) -> str:
        node_kubectl.run("create", "namespace", name)
        made.append(name)
        return name

    yield make
    for name in made:
        node_kubectl.run("delete", "namespace", name, "--wait=false", check=False)
    for name in made:
        gone = lambda name=name: node_kubectl.run("get", "namespace", name, check=False).returncode != 0  # noqa: E731
        wait_until(f"namespace {name} gone", gone, 120)
