"""The Ready condition as kompi reads it from pods and nodes."""

from __future__ import annotations

from kompi_components.kube.conditions import is_ready


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
