"""Before a StatefulSet is deleted: release its pods that sit on a lost node, so that the deletion ends.

A pod is gone only once its kubelet says its containers stopped. A node that is not Ready (stopped,
cut off, or a kwok node no longer served) never says so: its pods stay Terminating for ever, and the
deletion of their namespace waits for them. The cluster is being deleted, so nothing needs them; they
are deleted without that confirmation (grace period 0, as ``kubectl delete --force`` does). Pods on
Ready nodes end as usual.
"""

from __future__ import annotations

from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from kompi_components.kube.api import UNREADABLE, JsonApi, pod_selector, read_node
from kompi_components.kube.conditions import is_lost

# How long the release may wait for an API server that does not answer (the provider's delete of the
# StatefulSet comes next and waits in its own way).
RELEASE_SECONDS = 60.0


def release_pods_on_lost_nodes(
    core: client.CoreV1Api, apps: client.AppsV1Api, namespace: str, name: str, api: JsonApi | None = None
) -> list[str]:
    """Force-delete the pods of StatefulSet ``name`` whose node is gone or not Ready; returns their names.
    Nothing to do when the StatefulSet is gone, or this identity may not read nodes."""
    api = api or JsonApi.for_seconds(RELEASE_SECONDS)
    try:
        statefulset = api(apps.read_namespaced_stateful_set, name, namespace)
    except ApiException as error:
        if error.status == 404:
            return []
        raise
    pods = api(core.list_namespaced_pod, namespace, label_selector=pod_selector(statefulset))["items"]
    lost_nodes: dict[str, bool] = {}
    released = []
    for pod in pods:
        node = pod.get("spec", {}).get("nodeName")
        if not node:
            continue
        if node not in lost_nodes:
            lost_nodes[node] = _lost(api, core, node)
        if lost_nodes[node]:
            _force_delete(api, core, pod, namespace)
            released.append(pod["metadata"]["name"])
    return released


def _lost(api: JsonApi, core: client.CoreV1Api, name: str) -> bool:
    node = read_node(api, core, name)
    return node is not UNREADABLE and is_lost(node)  # cannot tell: leave the pod to the usual deletion


def _force_delete(api: JsonApi, core: client.CoreV1Api, pod: dict[str, Any], namespace: str) -> None:
    this_one = client.V1DeleteOptions(
        grace_period_seconds=0, preconditions=client.V1Preconditions(uid=pod["metadata"]["uid"])
    )
    try:
        api(core.delete_namespaced_pod, pod["metadata"]["name"], namespace, body=this_one)
    except ApiException as error:
        if error.status not in (404, 409):  # gone already, or replaced already
            raise
