"""kompi's pods meet the Pod Security "restricted" profile unless root is asked for."""

from __future__ import annotations

import pytest

from kompi_components.render import render_objects
from tests.manifests.pod_security import RULES, pod_specs
from tests.stacks import EVERY_FEATURE, ONE_SHOT, as_config

CONFIGS = {"defaults": {}, "every-feature": as_config(EVERY_FEATURE), "one-shot": as_config(ONE_SHOT)}


@pytest.mark.parametrize("config", CONFIGS.values(), ids=CONFIGS.keys())
@pytest.mark.parametrize("rule", RULES)
def test_default_pods_meet_the_restricted_profile(config: dict[str, str], rule: str) -> None:
    specs = list(pod_specs(render_objects(config)))
    assert len(specs) >= 2
    for name, spec in specs:
        assert RULES[rule](spec) == [], f"{name} breaks {rule}"


def test_no_service_account_token_is_mounted() -> None:
    for _, spec in pod_specs(render_objects(as_config(EVERY_FEATURE))):
        assert spec["automountServiceAccountToken"] is False


def test_root_is_an_explicit_opt_in_that_the_profile_catches() -> None:
    specs = dict(pod_specs(render_objects(as_config({"runAsRoot": True}))))
    broken = {rule for rule, check in RULES.items() for spec in specs.values() if check(spec)}
    assert broken == {"Running as Non-root", "Running as Non-root user", "Capabilities"}


def test_namespace_enforces_the_level_the_pods_meet() -> None:
    (namespace,) = [m for m in render_objects({}) if m["kind"] == "Namespace"]
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    (rooted,) = [m for m in render_objects(as_config({"runAsRoot": True})) if m["kind"] == "Namespace"]
    assert rooted["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "baseline"
