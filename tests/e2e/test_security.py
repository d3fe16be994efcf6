"""What the real API server enforces on kompi's objects: RBAC of the one-shot Job, Pod Security, ownership."""

from __future__ import annotations

import json

from tests.e2e.live import Kubectl, pods_ready, wait_until
from tests.e2e.project import ONE_SHOT, Project

ACCOUNT = "system:serviceaccount:kompi-oneshot:kompi-oneshot-oneshot"


def can_i(kubectl: Kubectl, *request: str) -> bool:
    """`kubectl auth can-i` as the one-shot Job's ServiceAccount (the API server's own authorizer)."""
    result = kubectl.run("auth", "can-i", *request, "--as", ACCOUNT, check=False)
    assert result.stdout.strip() in ("yes", "no"), result.stderr
    return result.stdout.strip() == "yes"


def test_the_one_shot_account_may_scale_its_workers_and_nothing_else(project_factory, kubectl: Kubectl) -> None:
    project: Project = project_factory("oneshot", source_stack="dev")
    project.set(clusterName="kompi-oneshot", namespace="kompi-oneshot", oneShot=ONE_SHOT)
    project.kompi("up")
    (job,) = kubectl.items("jobs", "kompi-oneshot")
    assert job["spec"]["template"]["spec"]["serviceAccountName"] == "kompi-oneshot-oneshot"

    scale = ["statefulsets/kompi-oneshot-worker", "--subresource=scale", "-n", "kompi-oneshot"]
    assert can_i(kubectl, "patch", *scale)
    assert can_i(kubectl, "get", *scale)
    denied = [
        ["patch", "statefulsets/kompi-oneshot-master", "--subresource=scale", "-n", "kompi-oneshot"],
        ["patch", "statefulsets/kompi-oneshot-worker", "-n", "kompi-oneshot"],  # the object, not its scale
        ["delete", "statefulsets/kompi-oneshot-worker", "-n", "kompi-oneshot"],
        ["get", "secrets", "-n", "kompi-oneshot"],
        ["create", "pods", "-n", "kompi-oneshot"],
        ["patch", "statefulsets/kompi-dev-worker", "--subresource=scale", "-n", "kompi-dev"],
        ["list", "nodes"],
    ]
    assert [request for request in denied if can_i(kubectl, *request)] == []


def test_restricted_pod_security_admits_every_default_pod(project_factory, kubectl: Kubectl) -> None:
    project: Project = project_factory("dev")
    project.kompi("up")
    namespace = kubectl.get("namespace", "kompi-dev", None)
    assert namespace is not None
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    wait_until("pods admitted and Ready", lambda: pods_ready(kubectl, "kompi-dev"), 90)
    assert len(kubectl.items("pods", "kompi-dev")) == 3


def test_kompis_root_pods_are_refused_under_restricted_and_admitted_in_kompis_namespace(
    project_factory, kubectl: Kubectl
) -> None:
    """runAsRoot: kompi labels its own namespace `baseline`; in a namespace that enforces `restricted`
    (createNamespace: false) the API server refuses the pods, as docs/security.md says."""
    project: Project = project_factory("dev")
    project.set(runAsRoot=True)
    rendered = project.rendered()
    (master,) = [m for m in rendered if m["kind"] == "StatefulSet" and m["metadata"]["name"] == "kompi-dev-master"]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "root-check"}} | {
        "spec": master["spec"]["template"]["spec"]
    }
    kubectl.run("create", "namespace", "kompi-psa-check")
    try:
        kubectl.run("label", "namespace", "kompi-psa-check", "pod-security.kubernetes.io/enforce=restricted")
        refused = kubectl.run(
            "create", "--dry-run=server", "-n", "kompi-psa-check", "-f", "-", input_text=json.dumps(pod), check=False
        )
        assert refused.returncode != 0 and 'violates PodSecurity "restricted' in refused.stderr
    finally:
        kubectl.run("delete", "namespace", "kompi-psa-check", "--wait=false")
    project.kompi("up")
    wait_until("root pods admitted under baseline and Ready", lambda: pods_ready(kubectl, "kompi-dev"), 90)


def test_destroy_without_create_namespace_keeps_the_namespace_and_empties_it(project_factory, kubectl) -> None:
    kubectl.run("create", "namespace", "team-mpi")
    try:
        project: Project = project_factory("dev")
        project.set(namespace="team-mpi", createNamespace=False)
        project.kompi("up")
        assert kubectl.items("statefulsets", "team-mpi")
        project.kompi("destroy")
        assert kubectl.get("namespace", "team-mpi", None) is not None
        kinds = "statefulsets,services,secrets,networkpolicies,pdb,pvc,jobs,serviceaccounts,roles,rolebindings,pods"
        selector = "app.kubernetes.io/name=kompi"
        wait_until("no kompi object left", lambda: kubectl.items(kinds, "team-mpi", selector) == [], 60)
    finally:
        kubectl.run("delete", "namespace", "team-mpi", "--wait=false", check=False)
