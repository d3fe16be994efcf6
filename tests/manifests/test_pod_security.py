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


HOST_NETWORK = {"hostNetwork": {"enabled": True, "mpiInterfaces": "ens5"}, "networkPolicy": {"enabled": False}}


@pytest.mark.parametrize("stack", [{}, ONE_SHOT], ids=["statefulsets", "one-shot"])
def test_host_network_pods_break_only_the_host_network_rules(stack: dict[str, object]) -> None:
    """The node's network (and, for sshd, its port) is the one weakening: every other rule of "restricted" holds."""
    objects = render_objects(as_config(stack | HOST_NETWORK))
    broken = {name: {rule for rule, check in RULES.items() if check(spec)} for name, spec in pod_specs(objects)}
    # The one-shot master runs no sshd, so it claims no port of the node.
    expected = {"StatefulSet": {"Host Namespaces", "Host Ports"}, "Job": {"Host Namespaces"}}
    assert broken == {name: expected[name.split("/")[0]] for name in broken}
    assert len(broken) == 2


def test_the_namespace_of_host_network_pods_is_privileged() -> None:
    (namespace,) = [m for m in render_objects(as_config(HOST_NETWORK)) if m["kind"] == "Namespace"]
    labels = namespace["metadata"]["labels"]
    assert labels["pod-security.kubernetes.io/enforce"] == labels["pod-security.kubernetes.io/warn"] == "privileged"
    assert not [
        m for m in render_objects(as_config(HOST_NETWORK | {"createNamespace": False})) if m["kind"] == "Namespace"
    ]
