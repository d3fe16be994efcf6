"""What discovery and one-shot mode change in the rendered objects."""

from __future__ import annotations

from typing import Any

from kompi_components.manifests.meta import DELETION_PROPAGATION, ObjectOptions
from kompi_components.render import planned_objects, render_objects
from tests.stacks import ONE_SHOT, as_config


def by_kind(objects: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(m["kind"], m["metadata"]["name"]): m for m in objects}


def options(config: dict[str, str], kind: str, name: str) -> ObjectOptions:
    """The Pulumi options kompi creates the object with."""
    (found,) = [
        o.options
        for o in planned_objects(config)
        if (o.manifest["kind"], o.manifest["metadata"]["name"]) == (kind, name)
    ]
    return found


def env(container: dict[str, Any]) -> dict[str, str]:
    return {item["name"]: item["value"] for item in container["env"]}


def test_default_master_has_no_worker_count_and_no_api_access() -> None:
    objects = by_kind(render_objects({"kompi:workers": "7"}))
    master = objects[("StatefulSet", "kompi-master")]["spec"]["template"]["spec"]
    (container,) = master["containers"]
    assert "KOMPI_WORKERS" not in env(container)
    # nothing the master's container runs with carries the count
    assert "7" not in [item.get("value") for item in container["env"]] + container.get("args", [])
    assert master["automountServiceAccountToken"] is False
    assert not any(kind in ("Role", "RoleBinding", "ServiceAccount", "Job") for kind, _ in objects)
    workers = objects[("StatefulSet", "kompi-worker")]
    assert "kompi/ignore-replicas" not in (workers["metadata"].get("annotations") or {})
    assert options({"kompi:workers": "7"}, "StatefulSet", "kompi-worker") == ObjectOptions()


def test_changing_the_worker_count_leaves_the_master_alone() -> None:
    def master(count: int) -> dict[str, Any]:
        return by_kind(render_objects({"kompi:workers": str(count)}))[("StatefulSet", "kompi-master")]

    assert master(2) == master(9)


def test_one_shot_master_is_a_job_that_never_reruns() -> None:
    objects = by_kind(render_objects(as_config(ONE_SHOT)))
    assert ("StatefulSet", "full-master") not in objects
    job = objects[("Job", "full-master")]
    # (and, as the stack sets kompi:queue, deleted without waiting for its pod: tests/manifests/test_queue.py)
    assert job["metadata"]["annotations"] == {"pulumi.com/skipAwait": "true", DELETION_PROPAGATION: "background"}
    assert job["spec"]["backoffLimit"] == 0
    pod = job["spec"]["template"]["spec"]
    assert pod["restartPolicy"] == "Never"
    (container,) = pod["containers"]
    assert container["command"] == ["kompi-oneshot"]
    assert container["args"] == ["/bin/sh", "-c", "mpiexec python3 /repo/train.py"]
    assert "readinessProbe" not in container
    assert "startupProbe" not in container
    values = env(container)
    assert values["KOMPI_WORKERS"] == "3"
    assert values["KOMPI_WAIT_TIMEOUT"] == "300"
    assert values["KOMPI_RELEASE_WORKERS"] == "true"
    # Only this pod gets a token, of the one-shot account.
    assert pod["serviceAccountName"] == "full-oneshot"
    assert pod["automountServiceAccountToken"] is True
    workers = objects[("StatefulSet", "full-worker")]
    # the Job's pod owns the worker count once the StatefulSet exists; the annotation tells kubectl users
    assert options(as_config(ONE_SHOT), "StatefulSet", "full-worker").ignore_changes == ("spec.replicas",)
    assert workers["metadata"]["annotations"]["kompi/ignore-replicas"] == "true"
    assert workers["spec"]["template"]["spec"]["automountServiceAccountToken"] is False


def test_one_shot_restarts_inside_its_pod_and_a_disrupted_pod_is_made_again() -> None:
    def job(one_shot: dict[str, Any]) -> dict[str, Any]:
        config = ONE_SHOT | {"oneShot": {"enabled": True, "command": ["true"], **one_shot}}
        return by_kind(render_objects(as_config(config)))[("Job", "full-master")]

    default = job({})
    # A failed command is restarted by kompi-oneshot in the same pod, within its budget: a failed pod is final.
    assert default["spec"]["backoffLimit"] == 0
    # A preempted, evicted or drained pod, or one that Kueue stopped, counts against nothing: the Job makes a new one.
    assert default["spec"]["podFailurePolicy"] == {
        "rules": [
            {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}, {"type": "TerminationTarget"}]}
        ]
    }
    assert default["spec"]["template"]["spec"]["restartPolicy"] == "Never"  # what a pod failure policy needs
    (container,) = default["spec"]["template"]["spec"]["containers"]
    assert env(container)["KOMPI_RESTARTS"] == "3"
    (container,) = job({"restarts": 0})["spec"]["template"]["spec"]["containers"]
    assert env(container)["KOMPI_RESTARTS"] == "0"


def test_release_rbac_is_the_worker_scale_subresource_only() -> None:
    objects = by_kind(render_objects(as_config(ONE_SHOT)))
    account = objects[("ServiceAccount", "full-oneshot")]
    assert account["automountServiceAccountToken"] is False
    role = objects[("Role", "full-oneshot")]
    assert role["metadata"]["namespace"] == "mpi"
    assert role["rules"] == [
        {
            "apiGroups": ["apps"],
            "resources": ["statefulsets/scale"],
            "resourceNames": ["full-worker"],
            "verbs": ["get", "patch", "update"],
        }
    ]
    binding = objects[("RoleBinding", "full-oneshot")]
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "full-oneshot"}
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "full-oneshot", "namespace": "mpi"}]
    assert not [kind for kind, _ in objects if kind.startswith("Cluster")]


def test_one_shot_without_release_has_no_rbac_and_no_token() -> None:
    config = ONE_SHOT | {"oneShot": {"enabled": True, "command": ["true"], "releaseWorkers": False}}
    objects = by_kind(render_objects(as_config(config)))
    assert not [kind for kind, _ in objects if kind in ("Role", "RoleBinding", "ServiceAccount")]
    pod = objects[("Job", "full-master")]["spec"]["template"]["spec"]
    assert pod["automountServiceAccountToken"] is False
    assert "serviceAccountName" not in pod
    assert "kompi/ignore-replicas" not in (objects[("StatefulSet", "full-worker")]["metadata"].get("annotations") or {})
    assert options(as_config(config), "StatefulSet", "full-worker") == ObjectOptions()
    # a new run is a new Job of the same name: the old one goes first (`up --replace` of an unchanged one too)
    assert options(as_config(config), "Job", "full-master") == ObjectOptions(delete_before_replace=True)
