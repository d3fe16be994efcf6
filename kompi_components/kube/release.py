"""Before a StatefulSet is deleted: release its pods that sit on a lost node, so that the deletion ends.

A pod is gone only once its kubelet says its containers stopped. A node that is not Ready (stopped,
cut off, or a kwok node no longer served) never says so: its pods stay Terminating for ever, and the
deletion of their namespace waits for them. The cluster is being deleted, so nothing needs them; they
are deleted without that confirmation (grace period 0, as ``kubectl delete --force`` does). Pods on
Ready nodes end as usual.
"""

from __future__ import annotations

import json
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from kompi_components.kube.conditions import is_ready

REQUEST_SECONDS = 10.0


def release_pods_on_lost_nodes(core: client.CoreV1Api, apps: client.AppsV1Api, namespace: str, name: str) -> list[str]:
    """Force-delete the pods of StatefulSet ``name`` whose node is gone or not Ready; returns their names.
    Nothing to do when the StatefulSet is gone, or this identity may not read nodes."""
    try:
        statefulset = _json(apps.read_namespaced_stateful_set(name, namespace, **_RAW))
    except ApiException as error:
        if error.status == 404:
            return []
        raise
    labels = statefulset["spec"]["selector"]["matchLabels"]
    selector = ",".join(f"{key}={value}" for key, value in labels.items())
    pods = _json(core.list_namespaced_pod(namespace, label_selector=selector, **_RAW))["items"]
    lost_nodes: dict[str, bool] = {}
    released = []
    for pod in pods:
        node = pod.get("spec", {}).get("nodeName")
        if not node:
            continue
        if node not in lost_nodes:
            lost_nodes[node] = _lost(core, node)
        if lost_nodes[node]:
            _force_delete(core, pod, namespace)
            released.append(pod["metadata"]["name"])
    return released


_RAW: dict[str, Any] = {"_preload_content": False, "_request_timeout": REQUEST_SECONDS}


def _json(response: Any) -> dict[str, Any]:
    return json.loads(response.data or b"{}")  # type: ignore[no-any-return]


def _lost(core: client.CoreV1Api, node: str) -> bool:
    try:
        return not is_ready(_json(core.read_node(node, **_RAW)))
    except ApiException as error:
        if error.status == 404:
            return True
        if error.status == 403:
            return False  # cannot tell: leave the pod to the usual deletion
        raise


def _force_delete(core: client.CoreV1Api, pod: dict[str, Any], namespace: str) -> None:
    this_one = client.V1DeleteOptions(
        grace_period_seconds=0, preconditions=client.V1Preconditions(uid=pod["metadata"]["uid"])
    )
    try:
        core.delete_namespaced_pod(pod["metadata"]["name"], namespace, body=this_one, **_RAW)
    except ApiException as error:
        if error.status not in (404, 409):  # gone already, or replaced already
            raise
