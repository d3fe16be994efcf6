"""kompi:queue under a platform's own Kueue settings (v0.17.0, built by the engine, on fake GPU nodes): Kueue
manages Jobs that name no queue (manageJobsWithoutQueueName) in the namespaces labelled for it
(managedJobsNamespaceSelector); one namespace also has a LocalQueue "default". `up` fails at once, or after the
short stuck-pod timeout, with one line naming the setting, where it used to wait out kompi:queueTimeoutSeconds
and say "is Kueue running?". One cluster for all: the settings are the same for each test.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from kompi_engine.cluster.kueue import API, CLUSTER_QUEUE, Settings
from kompi_engine.cluster.local import FakeNodes, LocalCluster
from tests.e2e.live import Kubectl
from tests.e2e.port_blocks import PortBlock
from tests.e2e.project import Project
from tests.e2e.test_queue import WORKLOADS, gated, team_stack

MANAGED = {"kompi-test/kueue": "managed"}
QUEUE = "team"
# namespace -> (its labels, its LocalQueues)
NAMESPACES = {
    "managed": (MANAGED, [QUEUE]),
    "defaulted": (MANAGED, [QUEUE, "default"]),
    "outside": ({}, [QUEUE]),
}


@pytest.fixture(scope="module")
def platform(
    engine_bin: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[LocalCluster, Kubectl, Path]]:
    root = tmp_path_factory.mktemp("queue-platform")
    settings = Settings(manage_jobs_without_queue_name=True, managed_jobs_namespace_selector={"matchLabels": MANAGED})
    local = LocalCluster(
        state=root / "cluster",
        bin=engine_bin,
        ports=PortBlock.QUEUE_PLATFORM.ports,
        nodes=FakeNodes(count=2, gpus=4),
        kueue=True,
        kueue_settings=settings,
    )
    local.up()
    kubectl = Kubectl(engine_bin / "kubectl", local.kubeconfig)
    try:
        objects = []
        for namespace, (labels, queues) in NAMESPACES.items():
            objects.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace, "labels": labels}})
            objects += [
                {
                    "apiVersion": API,
                    "kind": "LocalQueue",
                    "metadata": {"name": name, "namespace": namespace},
                    "spec": {"clusterQueue": CLUSTER_QUEUE},
                }
                for name in queues
            ]
        kubectl.run("apply", "-f", "-", input_text=yaml.safe_dump_all(objects))
        yield local, kubectl, root
    finally:
        local.down()


def platform_stack(root: Path, kubeconfig: Path, name: str, namespace: str, **values: object) -> Project:
    project = team_stack(root, kubeconfig, name, workers=1, queueTimeoutSeconds=60, **values)
    project.set(namespace=namespace, queue=QUEUE, stuckPodTimeoutSeconds=10)
    return project


def failed_up(project: Project) -> str:
    result = project.kompi("up", check=False)
    assert result.returncode == 1, result.stdout[-2000:]
    return result.stderr.strip().splitlines()[-1]


ONE_SHOT = {"enabled": True, "command": "mpiexec hostname", "releaseWorkers": True, "timeoutSeconds": 60}


@pytest.mark.parametrize(
    ("namespace", "setting"),
    [
        ("managed", "Kueue's manageJobsWithoutQueueName, which takes every Job that names no queue"),
        ("defaulted", 'the LocalQueue "default" in namespace defaulted, which Kueue gives every Job'),
    ],
)
def test_a_one_shot_job_that_kueues_job_integration_takes_fails_up_at_once_naming_the_setting(
    platform: tuple[LocalCluster, Kubectl, Path], namespace: str, setting: str
) -> None:
    """Kueue's Job webhook suspends the Job (and, with a LocalQueue "default", labels it with it): its pod, one
    member of the pod group, is not made, and the group never forms."""
    local, kubectl, root = platform
    project = platform_stack(root, local.kubeconfig, f"taken-{namespace}", namespace, oneShot=ONE_SHOT)
    try:
        last = failed_up(project)
        assert f"Kueue's Job integration took one-shot Job {namespace}/taken-{namespace}-master" in last, last
        assert setting in last, last
        job = kubectl.get("jobs", f"taken-{namespace}-master", namespace)
        assert job is not None
        if (
            namespace == "defaulted"
        ):  # labelled by Kueue's webhook, then maybe admitted alone (the LocalQueue has quota)
            assert job["metadata"]["labels"].get("kueue.x-k8s.io/queue-name") == "default", job["metadata"]
        else:
            assert job["spec"]["suspend"] is True  # as Kueue's webhook made it
    finally:
        project.kompi("destroy", check=False)


def test_a_cluster_in_a_namespace_outside_kueues_managed_namespaces_fails_up_naming_the_selector(
    platform: tuple[LocalCluster, Kubectl, Path],
) -> None:
    """Kueue's webhook gates the pods (they name kompi as their suspending parent) and its controller skips their
    namespace (ManagedJobsNamespaceSelectorAlwaysRespected): no Workload, gated for good."""
    local, kubectl, root = platform
    project = platform_stack(root, local.kubeconfig, "outside", "outside")
    try:
        last = failed_up(project)
        assert "Kueue made no workload for pod group outside-" in last, last
        assert "namespace outside is outside Kueue's managedJobsNamespaceSelector" in last, last
        pods = kubectl.items("pods", "outside")
        assert len(pods) == 2 and all(gated(pod) for pod in pods)
        assert not kubectl.items(WORKLOADS, "outside")
    finally:
        project.kompi("destroy", check=False)
