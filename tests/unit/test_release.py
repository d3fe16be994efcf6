"""Before its StatefulSet is deleted, the rollout step releases exactly the pods that a lost node holds."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException

from kompi_components.kube.api import ApiNotAnswering, JsonApi
from kompi_components.kube.release import release_pods_on_lost_nodes

SELECTOR = {"app.kubernetes.io/instance": "c", "app.kubernetes.io/component": "worker"}


class _Response:
    def __init__(self, body: dict[str, Any]) -> None:
        self.data = json.dumps(body).encode()


def _pod(name: str, node: str | None) -> dict[str, Any]:
    return {"metadata": {"name": name, "uid": f"uid-{name}"}, "spec": {"nodeName": node} if node else {}}


def _node(ready: str) -> dict[str, Any]:
    return {"status": {"conditions": [{"type": "Ready", "status": ready}]}}


@dataclass
class FakeApi:
    pods: list[dict[str, Any]]
    nodes: dict[str, dict[str, Any] | int]  # a node, or the HTTP status its read fails with
    statefulset_exists: bool = True
    deleted: list[tuple[str, int, str]] = field(default_factory=list)  # (pod, grace period, uid)
    selectors: list[str] = field(default_factory=list)
    unavailable: int = 0  # how many calls fail with 503 first (an API server that is restarting)

    def read_namespaced_stateful_set(self, name: str, namespace: str, **_: object) -> _Response:
        if not self.statefulset_exists:
            raise ApiException(status=404)
        return _Response({"spec": {"selector": {"matchLabels": SELECTOR}}})

    def list_namespaced_pod(self, namespace: str, label_selector: str, **_: object) -> _Response:
        if self.unavailable:
            self.unavailable -= 1
            raise ApiException(status=503)
        self.selectors.append(label_selector)
        return _Response({"items": self.pods})

    def read_node(self, name: str, **_: object) -> _Response:
        node = self.nodes.get(name, 404)
        if isinstance(node, int):
            raise ApiException(status=node)
        return _Response(node)

    def delete_namespaced_pod(self, name: str, namespace: str, body: Any, **_: object) -> _Response:
        self.deleted.append((name, body.grace_period_seconds, body.preconditions.uid))
        return _Response({})


def test_only_the_pods_on_a_node_that_is_gone_or_not_ready_are_force_deleted() -> None:
    api = FakeApi(
        pods=[
            _pod("c-worker-0", "up"),
            _pod("c-worker-1", "down"),
            _pod("c-worker-2", "gone"),
            _pod("c-worker-3", None),
        ],
        nodes={"up": _node("True"), "down": _node("Unknown")},
    )
    released = release_pods_on_lost_nodes(api, api, "ns", "c-worker")  # type: ignore[arg-type]
    assert released == ["c-worker-1", "c-worker-2"]
    assert api.deleted == [("c-worker-1", 0, "uid-c-worker-1"), ("c-worker-2", 0, "uid-c-worker-2")]
    assert api.selectors == ["app.kubernetes.io/instance=c,app.kubernetes.io/component=worker"]


def test_nothing_is_released_where_nodes_cannot_be_read_or_the_statefulset_is_gone() -> None:
    forbidden = FakeApi(pods=[_pod("c-worker-0", "n")], nodes={"n": 403})
    assert release_pods_on_lost_nodes(forbidden, forbidden, "ns", "c-worker") == []  # type: ignore[arg-type]
    gone = FakeApi(pods=[_pod("c-worker-0", "n")], nodes={}, statefulset_exists=False)
    assert release_pods_on_lost_nodes(gone, gone, "ns", "c-worker") == []  # type: ignore[arg-type]
    assert forbidden.deleted == gone.deleted == []


def test_an_api_server_that_does_not_answer_for_a_while_is_asked_again_until_the_deadline() -> None:
    now = [0.0]

    def calls() -> JsonApi:
        return JsonApi(
            deadline=now[0] + 5, clock=lambda: now[0], sleep=lambda seconds: now.__setitem__(0, now[0] + seconds)
        )

    restarting = FakeApi(pods=[_pod("c-worker-0", "gone")], nodes={}, unavailable=3)
    assert release_pods_on_lost_nodes(restarting, restarting, "ns", "c-worker", calls()) == ["c-worker-0"]  # type: ignore[arg-type]
    down = FakeApi(pods=[_pod("c-worker-0", "gone")], nodes={}, unavailable=1000)
    with pytest.raises(ApiNotAnswering):
        release_pods_on_lost_nodes(down, down, "ns", "c-worker", calls())  # type: ignore[arg-type]
    assert down.deleted == []
