"""One local cluster (real API server, kwok nodes) for the whole end-to-end session, built if needed."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kompi_engine.build.engine import KWOK_CLUSTER, build_engine
from kompi_engine.cluster.local import FakeNodes, LocalCluster
from tests.e2e.live import Kubectl
from tests.e2e.port_blocks import PortBlock
from tests.e2e.project import Project
from tests.e2e.running import running


@pytest.fixture(scope="session")
def engine_bin() -> Path:
    """What kwok's clusters run: bin/test starts their run before the real node's binaries are built."""
    return build_engine(KWOK_CLUSTER).bin


@pytest.fixture(scope="session")
def node_engine_bin() -> Path:
    """The whole engine, the real node's kubelet, CoreDNS, pause, kube-router and registry with it."""
    return build_engine().bin


@pytest.fixture(scope="session")
def cluster(engine_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    state = tmp_path_factory.mktemp("local-cluster")
    with running(
        LocalCluster(state, bin=engine_bin, ports=PortBlock.KWOK_SESSION.ports, nodes=FakeNodes(count=4))
    ) as local:
        yield local


@pytest.fixture(scope="session")
def kubectl(cluster: LocalCluster) -> Kubectl:
    return Kubectl(cluster.bin / "kubectl", cluster.kubeconfig)


@pytest.fixture
def project_factory(cluster: LocalCluster, tmp_path: Path) -> Iterator[Callable[..., Project]]:
    """Copies of stacks; whatever a test created is destroyed afterwards, also when it failed."""
    made: list[Project] = []

    def make(stack: str, source_stack: str | None = None) -> Project:
        project = Project.copy_of(stack, tmp_path / stack, cluster.kubeconfig, source_stack)
        project.use_the_clusters_storage_class()
        made.append(project)
        return project

    yield make
    for project in made:
        project.kompi("destroy", check=False)
