"""Gang scheduling with a real co-scheduler: scheduler-plugins' Coscheduling on local clusters of fake GPU nodes.

Each cluster here is the test's own (its GPU count is what the test is about), on ports apart from the
session cluster's. `kompi up` of a gang that does not fit waits: Pulumi's readiness wait for the
StatefulSets fails after its timeout (10 minutes), and meanwhile kompi prints the scheduler's reason
(`[kompi] gang NS: ...`); these tests read the reason and cancel `up`, as a user would press Ctrl-C.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from kompi_engine.cluster.gang import PERMIT_WAITING_SECONDS, SCHEDULER_NAME
from kompi_engine.cluster.local import FakeNodes, LocalCluster
from kompi_engine.cluster.ports import Ports
from tests.e2e.live import Kubectl, wait_until
from tests.e2e.port_blocks import PortBlock
from tests.e2e.project import Project
from tests.stacks import REPO

NAMESPACE = "kompi-gpu"  # the gpu stack's
GROUP = "podgroup.scheduling.x-k8s.io"
POD_GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
TOO_SMALL_PORTS, ROOMY_PORTS = PortBlock.GANG_TOO_SMALL.ports, PortBlock.GANG_ROOMY.ports


@dataclass
class GangCluster:
    local: LocalCluster
    kubectl: Kubectl
    root: Path
    projects: list[Project] = field(default_factory=list)

    def project(self, stack: str, source_stack: str | None = None) -> Project:
        project = Project.copy_of(stack, self.root / stack, self.local.kubeconfig, source_stack)
        self.projects.append(project)
        return project


@pytest.fixture(scope="module")
def gang_clusters(engine_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., GangCluster]]:
    """Local clusters with the given fake nodes, each stopped (after its stacks are destroyed) at the end."""
    made: list[GangCluster] = []

    def make(nodes: FakeNodes, ports: Ports) -> GangCluster:
        root = tmp_path_factory.mktemp("gang")
        local = LocalCluster(state=root / "cluster", bin=engine_bin, ports=ports, nodes=nodes)
        local.up()
        made.append(GangCluster(local, Kubectl(engine_bin / "kubectl", local.kubeconfig), root))
        return made[-1]

    yield make
    for cluster in made:
        for project in cluster.projects:
            project.kompi("destroy", check=False)
        cluster.local.down()


class Running:
    """`kompi up` in the background, its output collected as it comes."""

    def __init__(self, project: Project) -> None:
        self.process = project.start("up")
        self.lines: list[str] = []
        for stream in (self.process.stdout, self.process.stderr):
            threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: Any) -> None:
        for line in stream:
            self.lines.append(line)

    @property
    def text(self) -> str:
        return "".join(self.lines)

    def wait_for(self, kubectl: Kubectl, what: str, condition: Callable[[], bool], timeout: float) -> None:
        """wait_until, and on time-out say where the pods and `kompi up` were."""
        try:
            wait_until(what, condition, timeout)
        except AssertionError as error:
            states = {pod["metadata"]["name"]: unschedulable_reason(pod) or "scheduled" for pod in pods(kubectl)}
            raise AssertionError(f"{error}\npods: {states}\nkompi up printed:\n{self.text[-3000:]}") from None

    def cancel(self) -> None:
        """SIGTERM to kompi alone: it asks the Pulumi CLI to cancel and save its state, as Ctrl-C does."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(120)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(30)


def pods(kubectl: Kubectl, namespace: str = NAMESPACE) -> list[dict[str, Any]]:
    return kubectl.items("pods", namespace)


def bound(pod: dict[str, Any]) -> bool:
    return bool(pod["spec"].get("nodeName"))


def unschedulable_reason(pod: dict[str, Any]) -> str:
    """The scheduler's last word on a pending pod (its PodScheduled condition), or ""."""
    for condition in pod["status"].get("conditions", []):
        if condition["type"] == "PodScheduled" and condition["status"] == "False":
            return str(condition.get("message", ""))
    return ""


def gpus_held(kubectl: Kubectl, namespace: str = NAMESPACE) -> int:
    return sum(
        int(container["resources"].get("limits", {}).get("nvidia.com/gpu", 0))
        for pod in pods(kubectl, namespace)
        if bound(pod)
        for container in pod["spec"]["containers"]
    )


def scheduled_by(kubectl: Kubectl, namespace: str) -> dict[str, str]:
    """Pod name -> the scheduler that reported binding it (its Scheduled event)."""
    events = kubectl.items("events.events.k8s.io", namespace)
    return {
        event["regarding"]["name"]: event.get("reportingController", "")
        for event in events
        if event.get("reason") == "Scheduled"
    }


def bind_times(kubectl: Kubectl, namespace: str) -> dict[str, float]:
    """Pod name -> when it was bound (its Scheduled event's eventTime, in microseconds)."""
    events = kubectl.items("events.events.k8s.io", namespace)
    return {
        event["regarding"]["name"]: datetime.fromisoformat(event["eventTime"]).timestamp()
        for event in events
        if event.get("reason") == "Scheduled"
    }


def pod_group(kubectl: Kubectl, namespace: str = NAMESPACE, name: str = NAMESPACE) -> dict[str, Any]:
    found = kubectl.get(GROUP, name, namespace)
    assert found is not None, f"no PodGroup {namespace}/{name}"
    return found


def gpu_stack(cluster: GangCluster, workers: int, gpus: int) -> Project:
    project = cluster.project("gpu")
    project.set(workers=workers, gpusPerWorker=gpus)
    return project


def test_a_gang_that_does_not_fit_holds_no_gpu_and_up_says_why(gang_clusters) -> None:
    cluster: GangCluster = gang_clusters(FakeNodes(count=2, gpus=4), TOO_SMALL_PORTS)  # 8 GPUs
    kubectl = cluster.kubectl
    project = gpu_stack(cluster, workers=3, gpus=4)  # 12 GPUs asked
    running = Running(project)
    try:
        running.wait_for(
            kubectl,
            "the scheduler's verdict on master and 3 workers",
            lambda: len([pod for pod in pods(kubectl) if unschedulable_reason(pod)]) == 4,
            300,
        )
        # Long enough for a Permit wait to run out, were any member placed: still nothing is.
        time.sleep(PERMIT_WAITING_SECONDS + 5)
        current = pods(kubectl)
        assert len(current) == 4 and not [pod["metadata"]["name"] for pod in current if bound(pod)]
        assert gpus_held(kubectl) == 0
        for pod in current:
            assert pod["spec"]["schedulerName"] == SCHEDULER_NAME
            assert "resource gap" in unschedulable_reason(pod) and "nvidia.com/gpu" in unschedulable_reason(pod)
        group = pod_group(kubectl)
        assert group["spec"]["minMember"] == 4 and group["spec"]["minResources"]["nvidia.com/gpu"] == "12"
        status = group.get("status", {})
        assert status.get("phase") in ("Pending", "Scheduling") and not status.get("running")
        failed = [e for e in kubectl.items("events", NAMESPACE) if e.get("reason") == "FailedScheduling"]
        assert any("resource gap" in event["message"] for event in failed)
        # `kompi up` is still waiting, and says for which reason. Its first line may carry an earlier verdict
        # (the scheduler tried a member before the last one was made: "cannot find enough sibling pods");
        # the watch prints each new reason, so the resource gap follows.
        expected = f"[kompi] gang {NAMESPACE}: 4 of 4 gang pods not placed by {SCHEDULER_NAME}: "

        def reasons() -> list[str]:
            return [part.splitlines()[0] for part in running.text.split(expected)[1:]]

        wait_until("kompi up to print the resource gap", lambda: any("resource gap" in r for r in reasons()), 120)
        assert running.process.poll() is None
    finally:
        running.cancel()


@pytest.fixture(scope="module")
def roomy(gang_clusters) -> GangCluster:
    cluster: GangCluster = gang_clusters(FakeNodes(count=3, gpus=4), ROOMY_PORTS)  # 12 GPUs
    return cluster


def test_a_gang_that_fits_is_bound_together_and_scales_as_one(roomy: GangCluster) -> None:
    kubectl = roomy.kubectl
    project = gpu_stack(roomy, workers=2, gpus=4)
    project.kompi("up")
    first = pods(kubectl)
    assert len(first) == 3 and all(bound(pod) for pod in first)
    assert gpus_held(kubectl) == 8
    wait_until("the Scheduled events", lambda: len(scheduled_by(kubectl, NAMESPACE)) == 3, 60)
    assert set(scheduled_by(kubectl, NAMESPACE).values()) == {SCHEDULER_NAME}
    times = sorted(bind_times(kubectl, NAMESPACE).values())
    assert times[-1] - times[0] < 1.0, times  # released together by Permit once the last member was placed
    wait_until("the PodGroup Running", lambda: pod_group(kubectl).get("status", {}).get("phase") == "Running", 60)
    uids = {pod["metadata"]["name"]: pod["metadata"]["uid"] for pod in first}

    # One more worker: the same `up` raises minMember and minResources, and the new pod is admitted.
    project.set(workers=3)
    project.kompi("up")
    group = pod_group(kubectl)
    assert group["spec"] == {"minMember": 4, "minResources": {"cpu": "96", "memory": "768Gi", "nvidia.com/gpu": "12"}}
    grown = pods(kubectl)
    assert len(grown) == 4 and all(bound(pod) for pod in grown) and gpus_held(kubectl) == 12
    grown_uids = {pod["metadata"]["name"]: pod["metadata"]["uid"] for pod in grown}
    assert {name: grown_uids[name] for name in uids} == uids  # the running members were left alone

    # Past capacity (16 GPUs asked of 12): the running gang stays, the new worker waits and `up` says why.
    project.set(workers=4)
    running = Running(project)
    try:
        newcomer = "kompi-gpu-worker-3"
        running.wait_for(
            kubectl,
            f"the scheduler's verdict on {newcomer}",
            lambda: any(unschedulable_reason(pod) for pod in pods(kubectl) if pod["metadata"]["name"] == newcomer),
            300,
        )
        time.sleep(PERMIT_WAITING_SECONDS + 5)
        now = {pod["metadata"]["name"]: pod for pod in pods(kubectl)}
        # "resource gap" (Coscheduling's check of the whole gang) or "Insufficient" (the node filter), by timing
        assert not bound(now[newcomer]) and "nvidia.com/gpu" in unschedulable_reason(now[newcomer])
        assert {name: now[name]["metadata"]["uid"] for name in grown_uids} == grown_uids
        assert all(bound(pod) for name, pod in now.items() if name != newcomer) and gpus_held(kubectl) == 12
        assert pod_group(kubectl)["spec"]["minMember"] == 5
        expected = f"[kompi] gang {NAMESPACE}: 1 of 5 gang pods not placed by {SCHEDULER_NAME}: "
        wait_until("kompi up to print the reason", lambda: expected in running.text, 120)
        assert "nvidia.com/gpu" in running.text.split(expected, 1)[1].splitlines()[0]
    finally:
        running.cancel()


def test_a_migrated_kube_batch_stack_renders_and_the_warning_names_the_fix(roomy: GangCluster, tmp_path: Path) -> None:
    values = {
        "mpiWorkers": {
            "num": 2,
            "customScheduling": {
                "enabled": True,
                "schedulerName": "kube-batch",
                "podDisruptionBudget": {"enabled": True},
            },
        }
    }
    (tmp_path / "values.yaml").write_text(yaml.safe_dump(values))
    project = roomy.project("legacy", "dev")  # the dev stack file, overwritten by the import
    command = [sys.executable, "-m", "kompi_components", "import-values", str(tmp_path / "values.yaml")]
    imported = subprocess.run(
        [*command, "--stack", "legacy", "--dir", str(project.directory), "--force"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert imported.returncode == 0, imported.stderr
    assert "kube-batch is retired" in imported.stderr
    assert "move to kompi:gangScheduling.mode scheduler-plugins" in imported.stderr
    objects = project.rendered()
    statefulsets = [m for m in objects if m["kind"] == "StatefulSet"]
    assert {m["spec"]["template"]["spec"]["schedulerName"] for m in statefulsets} == {"kube-batch"}
    assert [m["kind"] for m in objects if m["kind"] in ("PodDisruptionBudget", "PodGroup")] == ["PodDisruptionBudget"]

    # The fix the warning names: a PodGroup for Coscheduling, and no schedulerName of its own.
    project.set(gangScheduling={"enabled": True, "mode": "scheduler-plugins"})
    [group] = [m for m in project.rendered() if m["kind"] == "PodGroup"]
    namespace, name = group["metadata"]["namespace"], group["metadata"]["name"]
    project.kompi("up")
    placed = pods(roomy.kubectl, namespace)
    assert len(placed) == 3 and all(bound(pod) for pod in placed)
    assert {pod["spec"]["schedulerName"] for pod in placed} == {SCHEDULER_NAME}
    assert {pod["metadata"]["labels"][POD_GROUP_LABEL] for pod in placed} == {name}
    assert pod_group(roomy.kubectl, namespace, name)["spec"]["minMember"] == 3
    project.kompi("destroy")
