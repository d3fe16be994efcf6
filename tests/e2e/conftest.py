"""One local cluster (real API server, kwok nodes) for the whole end-to-end session, built if needed."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kompi_engine.build import build_engine
from kompi_engine.local_cluster import FakeNodes, LocalCluster
from tests.e2e.live import Kubectl
from tests.e2e.port_blocks import PortBlock
from tests.e2e.project import Project
from tests.e2e.running import running

E2E = Path(__file__).parent
REAL_NODE_PACKAGES = (E2E / "node", E2E / "nodes")
# bin/test runs the end-to-end tests in two pytest-xdist workers (--dist loadgroup), one per group. Each group
# starts clusters of its own (PortBlock), so the two never share one; the real-node packages stay in one worker
# because each holds its real nodes for the package, and two sets of real nodes would halve each one's cores.
KWOK_GROUP, REAL_NODE_GROUP = "kwok", "real-nodes"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if E2E in item.path.parents:
            real = any(package in item.path.parents for package in REAL_NODE_PACKAGES)
            item.add_marker(pytest.mark.xdist_group(REAL_NODE_GROUP if real else KWOK_GROUP))


@pytest.fixture(scope="session")
def engine_bin() -> Path:
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
