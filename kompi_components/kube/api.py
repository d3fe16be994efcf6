"""Kubernetes API calls as the steps make them: the answer as plain JSON (no model objects, which cost
more CPU than the call for 512 pods), and asked again while the API server does not answer."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException

REQUEST_SECONDS = 10.0
RETRY_SECONDS = 0.5
RETRIED_STATUSES = frozenset({0, 429, 500, 502, 503, 504})  # 0: no HTTP answer at all


class ApiNotAnswering(RuntimeError):
    """The API server gave no usable answer before the deadline."""


@dataclass(frozen=True)
class JsonApi:
    """Makes calls until ``deadline`` (on ``clock``); an ApiException other than a retried status is raised
    at once, for the caller to judge (404, 403, 409)."""

    deadline: float
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)

    @classmethod
    def for_seconds(cls, seconds: float) -> JsonApi:
        return cls(time.monotonic() + seconds)

    def __call__(self, call: Callable[..., Any], *args: Any, **kwargs: Any) -> dict[str, Any]:
        while True:
            try:
                response = call(*args, _preload_content=False, _request_timeout=REQUEST_SECONDS, **kwargs)
                return json.loads(response.data or b"{}")  # type: ignore[no-any-return]
            except (urllib3.exceptions.HTTPError, OSError, ApiException) as error:
                if isinstance(error, ApiException) and error.status not in RETRIED_STATUSES:
                    raise
                if self.clock() > self.deadline:
                    raise ApiNotAnswering(f"the API server does not answer: {error}") from None
                self.sleep(RETRY_SECONDS)


def pod_selector(statefulset: Mapping[str, Any]) -> str:
    """The label selector of a StatefulSet's pods, as list calls take it."""
    labels = statefulset["spec"]["selector"]["matchLabels"]
    return ",".join(f"{key}={value}" for key, value in labels.items())


UNREADABLE: dict[str, Any] = {"unreadable": True}  # read_node's answer where this identity may not read nodes


def read_node(api: JsonApi, core: client.CoreV1Api, name: str) -> dict[str, Any] | None:
    """The Node object; None once it is deleted; UNREADABLE where nodes are not this identity's to read."""
    try:
        return api(core.read_node, name)
    except ApiException as error:
        if error.status == 404:
            return None
        if error.status == 403:
            return UNREADABLE
        raise
