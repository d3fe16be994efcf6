"""The local Kueue (no build, no cluster): its ClusterQueue holds what the nodes, fake or real, can give; a platform's
own settings reach its Configuration."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from kompi_engine.cli import _cluster, add_commands
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


def test_a_platforms_settings_reach_kueues_configuration_and_by_default_kueue_keeps_its_own() -> None:
    default = kueue.manager_config(Path("/state"), 9443, 8081)
    assert default["manageJobsWithoutQueueName"] is False and "managedJobsNamespaceSelector" not in default
    selector = {"matchLabels": {"team": "a"}}
    settings = kueue.Settings(manage_jobs_without_queue_name=True, managed_jobs_namespace_selector=selector)
    configured = kueue.manager_config(Path("/state"), 9443, 8081, settings)
    assert configured["manageJobsWithoutQueueName"] is True and configured["managedJobsNamespaceSelector"] == selector


def test_bin_kompi_local_up_takes_the_settings_and_refuses_a_selector_without_a_value(
    capsys: pytest.CaptureFixture[str],
) -> None:
    parser = argparse.ArgumentParser()
    add_commands(parser.add_subparsers())
    args = parser.parse_args(
        ["local", "up", "--kueue", "--kueue-manage-jobs-without-queue-name", "--kueue-managed-namespaces", "team=a"]
    )
    cluster = _cluster(args)
    assert cluster.kueue_settings == kueue.Settings(True, {"matchLabels": {"team": "a"}})
    with pytest.raises(SystemExit):
        parser.parse_args(["local", "up", "--kueue-managed-namespaces", "team"])
    assert "--kueue-managed-namespaces 'team': expected LABEL=VALUE" in capsys.readouterr().err
