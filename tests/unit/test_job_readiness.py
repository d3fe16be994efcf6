"""kompi up's rollout decisions on StatefulSet and pod objects as the API server returns them."""

from __future__ import annotations

from typing import Any

import pytest

from kompi_components.engine.job_readiness import not_ready_reason, of_previous_template, rollout_complete


def statefulset(generation: int = 2, observed: int = 2, replicas: int = 1, ready: int = 1, current: str = "new"):
    status = {"observedGeneration": observed, "readyReplicas": ready, "currentRevision": current}
    return {
        "metadata": {"generation": generation},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "x"}}},
        "status": status | {"updateRevision": "new"},
    }


def pod(revision: str, ready: bool, **extra: Any) -> dict[str, Any]:
    conditions = [{"type": "Ready", "status": "True" if ready else "False"}]
    return {
        "metadata": {"name": f"p-{revision}-{ready}", "uid": "u", "labels": {"controller-revision-hash": revision}}
        | extra,
        "status": {"phase": "Running" if ready else "Pending", "conditions": conditions},
    }


@pytest.mark.parametrize(
    ("settings", "complete"),
    [
        ({}, True),
        ({"replicas": 0, "ready": 0}, True),
        ({"observed": 1}, False),  # the controller has not seen the new template yet (pulumi-kubernetes 4.25's case)
        ({"observed": 0, "generation": 0}, False),
        ({"ready": 0}, False),
        ({"current": "old"}, False),  # pods of the previous template remain
    ],
)
def test_a_rollout_is_complete_only_when_kubectl_rollout_status_would_say_so(
    settings: dict[str, Any], complete: bool
) -> None:
    assert rollout_complete(statefulset(**settings)) is complete


def test_a_pod_is_of_the_previous_template_when_its_revision_is_not_the_update_revision() -> None:
    rolling = statefulset(current="old")
    assert of_previous_template(rolling, pod("old", ready=False))
    assert not of_previous_template(rolling, pod("new", ready=False))
    assert not of_previous_template({"status": {}}, pod("old", ready=False))  # before the controller names one


def test_the_reason_a_pod_is_not_ready_is_the_most_specific_one_it_carries() -> None:
    unschedulable = pod("old", ready=False)
    unschedulable["status"]["conditions"].append(
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/4 nodes are available"}
    )
    assert not_ready_reason(unschedulable) == "Unschedulable: 0/4 nodes are available"
    pulling = pod("old", ready=False)
    pulling["status"]["containerStatuses"] = [
        {"name": "mpi", "state": {"waiting": {"reason": "ImagePullBackOff", "message": "no such image"}}}
    ]
    assert not_ready_reason(pulling) == "mpi ImagePullBackOff: no such image"
    assert not_ready_reason(pod("old", ready=False)) == "Pending, not Ready"
