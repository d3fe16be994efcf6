"""The Ready condition as kompi reads it from pods and nodes."""

from __future__ import annotations

from kompi_components.kube.conditions import has_condition, is_ready, true_condition


def status(*conditions: tuple[str, str]) -> dict[str, object]:
    return {"status": {"conditions": [{"type": kind, "status": value} for kind, value in conditions]}}


def test_ready_only_when_the_ready_condition_is_true() -> None:
    assert is_ready(status(("PodScheduled", "True"), ("Ready", "True")))
    assert not is_ready(status(("PodScheduled", "True"), ("Ready", "False")))
    assert not is_ready(status(("ContainersReady", "True"), ("Ready", "Unknown")))  # a node gone quiet


def test_not_ready_without_conditions_or_status() -> None:
    assert not is_ready(status(("PodScheduled", "True")))
    assert not is_ready({"status": {}})
    assert not is_ready({})


def test_a_crd_just_created_has_no_condition_until_its_status_lists_it() -> None:
    # a CRD right after `kubectl apply`: status.conditions null, which `kubectl wait` fails on
    assert not has_condition({"status": {"conditions": None}}, "Established")
    assert not has_condition({"status": None}, "Established")
    assert has_condition(status(("NamesAccepted", "True"), ("Established", "True")), "Established")


def test_the_true_condition_itself_gives_since_when() -> None:
    since = "2026-12-06T02:00:00Z"
    ready = {"type": "Ready", "status": "True", "lastTransitionTime": since}
    pod = {"status": {"conditions": [{"type": "PodScheduled", "status": "True"}, ready]}}
    assert true_condition(pod, "Ready") == ready
    assert true_condition(status(("Ready", "False")), "Ready") is None
    assert true_condition({}, "Ready") is None
