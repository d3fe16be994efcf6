"""QueueRelease: with kompi:queue, gives the cluster's pods back to Kueue's quota when it is destroyed.

A serving pod group (a StatefulSet's pods come back) never finishes by itself, and its Workload holds
the quota until the group's pods are gone. Kueue v0.16 and later put no finalizer on pods that name a
suspending parent, as kompi's do (manifests/queue.py); an older Kueue, or one with its
SkipFinalizersForPodsSuspendedByParent gate off, holds a finalizer on every pod until the group's Workload
is deleted. So the master and the workers depend on this resource, which Pulumi deletes after them (their
StatefulSets and Job are deleted without waiting for their pods, pulumi.com/deletionPropagationPolicy
background), and its delete deletes the group's Workload and waits until the pods are gone: `destroy`
ends with the quota given back, with either Kueue. A resize makes a new group; the rollout step deletes
the old group's Workload then (kube/workloads.py).
"""

from __future__ import annotations

import time
from typing import Any

import pulumi
import pulumi.dynamic
from kubernetes import client

from kompi_components.components.dynamic_provider import KompiProvider
from kompi_components.components.rollout import ACCESS, access_of
from kompi_components.errors import KompiError
from kompi_components.kube.access import ClusterAccess
from kompi_components.kube.workloads import delete_workload
from kompi_components.manifests.queue import GROUP_LABEL

GONE_TIMEOUT_SECONDS = 300.0


def release(custom: client.CustomObjectsApi, core: client.CoreV1Api, namespace: str, group: str) -> None:
    """Delete the group's Workload (Kueue then stops the group's pods and removes any finalizer of its own),
    and wait until none of the group's pods is left."""
    delete_workload(custom, namespace, group)
    deadline = time.monotonic() + GONE_TIMEOUT_SECONDS
    while core.list_namespaced_pod(namespace, label_selector=f"{GROUP_LABEL}={group}").items:
        if time.monotonic() > deadline:
            raise KompiError(
                f"pods of Kueue pod group {namespace}/{group} still there {GONE_TIMEOUT_SECONDS:.0f} s after its "
                f"Workload was deleted: is Kueue running? (kubectl -n {namespace} get pods -l {GROUP_LABEL}={group})"
            )
        time.sleep(1.0)


class _Provider(KompiProvider):
    def create(self, props: dict[str, Any]) -> pulumi.dynamic.CreateResult:
        return pulumi.dynamic.CreateResult(f"{props['namespace']}/{props['group']}", props)

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> pulumi.dynamic.DiffResult:
        changed = any(olds.get(key) != news.get(key) for key in ("namespace", "group", *ACCESS))
        return pulumi.dynamic.DiffResult(changes=changed, replaces=[], delete_before_replace=False)

    def update(self, _id: str, _olds: dict[str, Any], news: dict[str, Any]) -> pulumi.dynamic.UpdateResult:
        return pulumi.dynamic.UpdateResult(news)

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        api = access_of(props).api_client()
        release(client.CustomObjectsApi(api), client.CoreV1Api(api), props["namespace"], props["group"])


class QueueRelease(pulumi.dynamic.Resource):
    """Deleted after the cluster's pods' owners: deletes the pod group's Workload so that the pods can go."""

    def __init__(
        self,
        name: str,
        namespace: pulumi.Input[str],
        group: pulumi.Input[str],
        access: ClusterAccess,
        opts: pulumi.ResourceOptions,
    ) -> None:
        props: dict[str, Any] = {
            "namespace": namespace,
            "group": group,
            "kubeconfig": pulumi.Output.secret(access.kubeconfig or ""),
            "context": access.context or "",
            "cluster": access.cluster or "",
        }
        super().__init__(_Provider(), name, props, opts)
