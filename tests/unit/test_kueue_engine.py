"""The local Kueue's ClusterQueue (no build, no cluster): it holds what the nodes, fake or real, can give."""

from __future__ import annotations

from typing import Any

from kompi_engine.cluster import kueue
from kompi_engine.cluster.local import FakeNodes


def _node(allocatable: dict[str, str]) -> dict[str, Any]:
    return {"status": {"allocatable": allocatable}}


def test_a_real_node_without_gpus_gives_its_cpus_and_memory_and_no_gpu() -> None:
    nodes = [_node({"cpu": "2", "memory": "24501312Ki", "pods": "110"})]
    assert kueue.allocatable(nodes) == {"cpu": "2", "memory": "24501312Ki", "nvidia.com/gpu": "0"}


def test_fake_gpu_nodes_add_up() -> None:
    fake = FakeNodes(count=2, gpus=4, cpu="8", memory="32Gi")
    nodes = [_node(manifest["status"]["allocatable"]) for manifest in fake.manifests()]  # type: ignore[index]
    assert kueue.allocatable(nodes) == {"cpu": "16", "memory": "64Gi", "nvidia.com/gpu": "8"}


def test_the_cluster_queue_covers_cpu_memory_and_gpus_with_those_figures() -> None:
    capacity = {"cpu": "2500m", "memory": "1Gi", "nvidia.com/gpu": "0"}
    [flavor, cluster_queue] = kueue.quota_manifests(capacity)
    assert flavor["kind"] == "ResourceFlavor" and cluster_queue["metadata"]["name"] == kueue.CLUSTER_QUEUE
    [group] = cluster_queue["spec"]["resourceGroups"]
    assert group["coveredResources"] == ["cpu", "memory", "nvidia.com/gpu"]
    quotas = {quota["name"]: quota["nominalQuota"] for quota in group["flavors"][0]["resources"]}
    assert quotas == capacity
