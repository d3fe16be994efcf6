"""Faults during `kompi up`: the process killed, the API server gone. The next runs must converge."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path

import pytest

from kompi_components.engine.job_readiness import is_ready
from kompi_components.engine.local_cluster import LocalCluster
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

    # The master that could not be scheduled is of the previous template and never Ready: its StatefulSet
    # would wait for it for ever, so `up` replaces it.
    project.set(masterPod={})
    project.kompi("refresh")
    converged = project.kompi("up")
    assert "replacing kompi-dev-master-0: it runs the previous template and is not Ready (Unschedulable" in (
        converged.stderr
    )
    master = kubectl.get("pod", "kompi-dev-master-0", own_namespace)
    assert master is not None and is_ready(master) and "kompi-test" not in master["spec"].get("nodeSelector", {})
    assert_live_equals_render(kubectl, project)
    assert_destroy_leaves_no_orphan(project, kubectl, own_namespace)
