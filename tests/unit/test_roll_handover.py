"""hand_over: a StatefulSet made under the controller's RollingUpdate gets kompi's OnDelete before Pulumi applies.

The API server's own refusal (OnDelete beside the defaulted rollingUpdate) is met for real in
tests/e2e/test_roll_handover.py; here, what the handover sends and when it sends nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException

from kompi_components.kube.api import JsonApi
from kompi_components.kube.rollout import MERGE_PATCH, hand_over

ON_DELETE = {"type": "OnDelete"}
DEFAULTED = {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}


class _Response:
    def __init__(self, body: dict[str, Any]) -> None:
        self.data = json.dumps(body).encode()


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386, as the API server applies application/merge-patch+json: null removes a key."""
    if not isinstance(patch, dict):
        return patch
    merged = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = merge_patch(merged.get(key), value)
    return merged


@dataclass
class FakeApps:
    statefulset: dict[str, Any] | None
    patches: list[tuple[dict[str, Any], str]] = field(default_factory=list)

    def read_namespaced_stateful_set(self, name: str, namespace: str, **_: object) -> _Response:
        if self.statefulset is None:
            raise ApiException(status=404, reason="Not Found")
        return _Response(self.statefulset)

    def patch_namespaced_stateful_set(
        self, name: str, namespace: str, body: dict[str, Any], _content_type: str, **_: object
    ) -> _Response:
        assert self.statefulset is not None
        self.patches.append((body, _content_type))
        self.statefulset = merge_patch(self.statefulset, body)
        return _Response(self.statefulset)


def _hand_over(apps: FakeApps) -> bool:
    return hand_over(apps, "ns", "c-worker", ON_DELETE, JsonApi.for_seconds(5))  # type: ignore[arg-type]


def test_a_statefulset_of_an_earlier_kompi_loses_its_defaulted_rolling_update() -> None:
    apps = FakeApps({"metadata": {"name": "c-worker"}, "spec": {"replicas": 2, "updateStrategy": DEFAULTED}})
    assert _hand_over(apps) is True
    ((body, content_type),) = apps.patches
    assert content_type == MERGE_PATCH
    assert body == {"spec": {"updateStrategy": {"type": "OnDelete", "rollingUpdate": None}}}
    assert apps.statefulset is not None
    assert apps.statefulset["spec"] == {"replicas": 2, "updateStrategy": ON_DELETE}


@pytest.mark.parametrize("live", [None, {"metadata": {"name": "c-worker"}, "spec": {"updateStrategy": ON_DELETE}}])
def test_nothing_is_sent_for_a_new_statefulset_or_one_handed_over_already(live: dict[str, Any] | None) -> None:
    apps = FakeApps(live)
    assert _hand_over(apps) is False
    assert apps.patches == []


def test_a_refusal_other_than_not_found_is_raised() -> None:
    class Forbidden(FakeApps):
        def read_namespaced_stateful_set(self, name: str, namespace: str, **_: object) -> _Response:
            raise ApiException(status=403, reason="Forbidden")

    with pytest.raises(ApiException) as raised:
        _hand_over(Forbidden(None))
    assert raised.value.status == 403
