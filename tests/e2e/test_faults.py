"""Faults during `kompi up`: the process killed, the API server gone. The next runs must converge."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from contextlib import suppress

import pytest

from kompi_components.kube.conditions import is_ready
from kompi_engine.cluster.local import LocalCluster
from tests.e2e.live import Kubectl, provider_plugins, wait_until
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


def test_up_killed_midway_then_refresh_and_up_converge(project_factory, kubectl: Kubectl, own_namespace) -> None:
    project = project_in(project_factory, own_namespace)
    plugins_before = provider_plugins(project.directory)
    running = project.start("up")
    wait_until("the first objects", lambda: kubectl.get("secret", "kompi-dev-ssh", own_namespace) is not None, 120)
    os.killpg(running.pid, signal.SIGKILL)  # the whole process group, as a cancelled CI job is killed
    running.wait(30)
    # The CLI starts its provider plugins in process groups of their own, so they outlive a killed group
    # (as they would on a CI runner); this test must not leave them behind.
    for orphan in provider_plugins(project.directory) - plugins_before:
        with suppress(ProcessLookupError):
            os.kill(orphan, signal.SIGKILL)

    project.kompi("refresh")
    project.kompi("up")

    assert_live_equals_render(kubectl, project)
    assert set(project.last_json(project.kompi("preview"))) == {"same"}
    assert_destroy_leaves_no_orphan(project, kubectl, own_namespace)


def test_a_checkpoint_whose_metadata_a_killed_cli_tore_is_read_again_by_the_next_operation(
    project_factory, kubectl: Kubectl, own_namespace
) -> None:
    """What the kill above leaves when it lands inside the backend's write of a checkpoint's `.attrs` sidecar
    (seen under load: every later operation failed with `failed to load checkpoint: EOF`), made on purpose."""
    project = project_in(project_factory, own_namespace)
    project.kompi("up")
    sidecar = project.directory / "state" / ".pulumi" / "stacks" / "kompi" / "dev.json.attrs"
    assert sidecar.stat().st_size > 0
    sidecar.write_text("")  # truncated and not yet written again
    result = project.kompi("preview")
    assert "kompi: removed the torn metadata file dev.json.attrs of stack dev" in result.stdout
    assert set(project.last_json(result)) == {"same"}
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
