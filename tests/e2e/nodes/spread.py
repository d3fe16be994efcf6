"""kompi stacks spread over the local cluster's real nodes, for tests/e2e/nodes and bench/nodes.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kompi_engine.cluster.local import LocalCluster
from kompi_engine.cluster.real_node import NODE_NAME
from kompi_engine.operation.first_node import flavor_of
from tests.e2e.live import Kubectl
from tests.e2e.node.conftest import SMALL_POD
from tests.e2e.node.faults import Stack
from tests.e2e.project import Project

ON_THE_FIRST_NODE = {"nodeSelector": {"kubernetes.io/hostname": NODE_NAME}}


def spread_stack(
    nodes: LocalCluster,
    kubectl: Kubectl,
    directory: Path,
    name: str,
    image: str,
    workers: int,
    pod: dict[str, Any] = SMALL_POD,
) -> tuple[Project, Stack]:
    """A dev stack of ``workers`` workers, at most one per node, its master on the first node; ``image`` is
    REPOSITORY:TAG (a registry's address may hold a colon of its own)."""
    repository, tag = image.rsplit(":", 1)
    project = Project.copy_of("dev", directory, nodes.kubeconfig)
    project.set(
        clusterName=name,
        namespace=name,
        workers=workers,
        oneWorkerPerNode=True,
        image=repository,
        imageTag=tag,
        masterPod=pod | ON_THE_FIRST_NODE,
        workerPod=pod,
    )
    return project, Stack(kubectl, nodes, flavor_of(tag), name, workers)
