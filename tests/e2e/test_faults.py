"""Faults during `kompi up`: the process killed, the API server gone. The next runs must converge."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path

import pytest

from kompi_components.config import load_config
from kompi_components.engine.conditions import is_ready
from kompi_components.engine.job_readiness import JobReadinessError, wait_until_jobs_can_run
from kompi_components.engine.local_cluster import LocalCluster
from kompi_components.stack_files import read_stack_config
from tests.e2e.live import Kubectl, wait_until
from tests.e2e.project import Project, assert_live_equals_render

KINDS = "statefulsets,services,secrets,networkpolicies,pdb,pvc,jobs,serviceaccounts,roles,rolebindings,pods"


@pytest.fixture
def own_namespace(kubectl: Kubectl, request: pytest.FixtureRequest) -> Iterator[str]:
    """A namespace kompi does not own (createNamespace: false), so that destroy cannot hide an orphan
    by deleting the namespace around it."""
    namespace = f"kompi-faults-{len(request.node.name) % 1000}-{abs(hash(request.node.name)) % 10000}"
    kubectl.run("create", "namespace", namespace)
    yield namespace
    kubectl.run("delete", "namespace", namespace, "--wait=false", check=False)


def project_in(project_factory, namespace: str) -> Project:
    project: Project = project_factory("dev")
    project.set(namespace=namespace, createNamespace=False)
    return project


def assert_destroy_leaves_no_orphan(project: Project, kubectl: Kubectl, namespace: str) -> None:
    project.kompi("destroy")
    selector = "app.kubernetes.io/name=kompi"
    wait_until("no kompi object left", lambda: kubectl.items(KINDS, namespace, selector) == [], 60)


def provider_plugins() -> set[int]:
    return {
        int(entry.name)
        for entry in Path("/proc").iterdir()
        if entry.name.isdigit() and "pulumi-resource-" in _command_line(entry)
    }


def _command_line(process: Path) -> str:
    try:
        return (process / "cmdline").read_text(errors="replace")
    except OSError:
        return ""


def test_up_killed_midway_then_refresh_and_up_converge(project_factory, kubectl: Kubectl, own_namespace) -> None:
    project = project_in(project_factory, own_namespace)
    plugins_before = provider_plugins()
    running = project.start("up")
    wait_until("the first objects", lambda: kubectl.get("secret", "kompi-dev-ssh", own_namespace) is not None, 120)
    os.killpg(running.pid, signal.SIGKILL)  # the whole process group, as a cancelled CI job is killed
    running.wait(30)
    # The CLI starts its provider plugins in process groups of their own, so they outlive a killed group
    # (as they would on a CI runner); this test must not leave them behind.
    for orphan in provider_plugins() - plugins_before:
        with suppress(ProcessLookupError):
            os.kill(orphan, signal.SIGKILL)

    project.kompi("refresh")
    project.kompi("up")

    assert_live_equals_render(kubectl, project)
    assert set(project.last_json(project.kompi("preview"))) == {"same"}
    assert_destroy_leaves_no_orphan(project, kubectl, own_namespace)


def test_api_server_gone_during_up_fails_clearly_and_the_next_up_converges(
    project_factory, kubectl: Kubectl, cluster: LocalCluster, own_namespace
) -> None:
    project = project_in(project_factory, own_namespace)
    project.set(masterPod={"nodeSelector": {"kompi-test": "no-such-node"}})  # `up` waits for the master
    running = project.start("up")
    wait_until("up waiting for the master", lambda: kubectl.get("pod", "kompi-dev-master-0", own_namespace), 120)
    cluster.stop_apiserver()
    try:
        _, stderr = running.communicate(timeout=300)
    finally:
        cluster.start_apiserver()
    assert running.returncode == 1
    assert stderr.strip().splitlines()[-1] == (
        "error: the Kubernetes API server stopped answering during up; the operation was cancelled and its state "
        "saved: run `bin/kompi up --stack dev` again once the server is back"
    )

    # The outage outlasts the node controller's grace period, which marks every pod of the fake nodes not
    # Ready (kwok reports them Ready again, as a kubelet does); the master that could not be scheduled is
    # of the previous template, and its StatefulSet replaces it.
    project.set(masterPod={})
    project.kompi("refresh")
    project.kompi("up")
    master = kubectl.get("pod", "kompi-dev-master-0", own_namespace)
    assert master is not None and is_ready(master) and "kompi-test" not in master["spec"].get("nodeSelector", {})
    assert_live_equals_render(kubectl, project)
    assert_destroy_leaves_no_orphan(project, kubectl, own_namespace)


def test_a_fake_node_reports_its_pods_ready_again_after_the_node_controller_marked_them(
    project_factory, kubectl: Kubectl, own_namespace
) -> None:
    """What the node lifecycle controller does to every pod of a node it lost (an API server stopped for
    longer than its grace period): Ready=False. A kubelet reports the pod Ready again; so must kwok."""
    project = project_in(project_factory, own_namespace)
    project.kompi("up")
    worker = "kompi-dev-worker-0"
    not_ready = {"status": {"conditions": [{"type": "Ready", "status": "False", "reason": "NodeNotReady"}]}}
    kubectl.run("patch", "pod", worker, "-n", own_namespace, "--subresource=status", "-p", json.dumps(not_ready))
    wait_until(f"{worker} Ready again", lambda: is_ready(kubectl.get("pod", worker, own_namespace) or {}), 30)
    project.kompi("up")  # and `up` finds a cluster where jobs would run


def test_up_fails_naming_the_pod_that_keeps_jobs_from_running(
    project_factory, kubectl: Kubectl, own_namespace, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = project_in(project_factory, own_namespace)
    project.kompi("up")
    # drift behind Pulumi's back: the workers' template now asks for a node that does not exist
    drift = {"spec": {"template": {"spec": {"nodeSelector": {"kompi-test": "no-such-node"}}}}}
    kubectl.run("patch", "statefulset", "kompi-dev-worker", "-n", own_namespace, "-p", json.dumps(drift))
    monkeypatch.setenv("KUBECONFIG", str(kubectl.kubeconfig))
    config = load_config(read_stack_config(project.directory, project.stack))
    with pytest.raises(JobReadinessError) as refused:
        wait_until_jobs_can_run(config, str(kubectl.binary), print, timeout=15)
    message = str(refused.value)
    assert message.startswith("StatefulSet kompi-dev-worker did not finish its rollout within 15 s (")
    assert "kompi-dev-worker-1: Unschedulable: 0/4 nodes are available" in message
