"""Every object kompi renders is valid for a current Kubernetes release (strict: no unknown fields)."""

from __future__ import annotations

import pytest

from kompi_components.render import render_objects, render_stack
from tests.k8s_schema import validate
from tests.stacks import EVERY_FEATURE, ONE_SHOT, REPO, as_config, stack_names


@pytest.mark.parametrize("stack", stack_names())
def test_every_stack_in_the_repo_renders_schema_valid_objects(stack: str) -> None:
    objects = render_stack(REPO, stack)
    assert objects
    for manifest in objects:
        validate(manifest)


@pytest.mark.parametrize(
    "variant",
    [
        {},
        {"gangScheduling": {"enabled": True, "mode": "volcano"}},
        {"gangScheduling": {"enabled": True, "mode": "scheduler-plugins"}},
        {"gangScheduling": {"enabled": True, "mode": "pdb"}},
        {"runAsRoot": True, "createNamespace": False, "networkPolicy": {"enabled": False}, "shmSize": None},
        ONE_SHOT,
        ONE_SHOT | {"oneShot": {"enabled": True, "command": ["true"], "releaseWorkers": False}},
    ],
    ids=["every-feature", "volcano", "scheduler-plugins", "pdb", "root-no-policy", "one-shot", "one-shot-keep"],
)
def test_every_feature_renders_schema_valid_objects(variant: dict[str, object]) -> None:
    objects = render_objects(as_config(EVERY_FEATURE | variant))
    kinds = {manifest["kind"] for manifest in objects}
    assert {"Secret", "Service", "StatefulSet"} <= kinds
    for manifest in objects:
        validate(manifest)


def test_the_validator_rejects_an_unknown_field() -> None:
    service = next(m for m in render_objects({}) if m["kind"] == "Service")
    service["spec"]["clusterIp"] = "None"  # wrong case: not a field of ServiceSpec
    with pytest.raises(AssertionError, match="Service/kompi"):
        validate(service)
