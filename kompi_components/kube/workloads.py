"""A StatefulSet's part in Kueue's Workloads (kompi:queue): read its pod group's, keep it, end old ones.

Kueue makes a pod group's pods the only owners of the group's Workload, so the garbage collector deletes
the Workload once every pod is gone. A roll replaces all pods at once and can get there before Kueue has
made the replacements owners too: the cluster would then queue again under a new Workload, and another
workload could take its quota meanwhile. So the rollout makes each StatefulSet an owner as well (Kueue's
own StatefulSet integration keeps its Workloads owned by the StatefulSet), and then deletes the Workloads
of the StatefulSet's older groups (a resize) itself, since the garbage collector no longer does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from kompi_components.kube.api import UNREADABLE, JsonApi
from kompi_components.kube.kueue_status import group_of
from kompi_components.manifests.queue import GROUP_LABEL

WORKLOAD_GROUP, WORKLOAD_VERSION, WORKLOADS = "kueue.x-k8s.io", "v1beta2", "workloads"
JSON_PATCH = "application/json-patch+json"


def workloads_path(namespace: str) -> tuple[str, str, str, str]:
    """The CustomObjectsApi arguments that name the namespace's Workloads."""
    return WORKLOAD_GROUP, WORKLOAD_VERSION, namespace, WORKLOADS


def workload_path(namespace: str, group: str) -> tuple[str, str, str, str, str]:
    """The CustomObjectsApi arguments that name a pod group's Workload (Kueue names it after the group)."""
    return (*workloads_path(namespace), group)


def delete_workload(custom: client.CustomObjectsApi, namespace: str, group: str) -> None:
    """Delete a pod group's Workload (gone already is fine): Kueue then stops the group's pods that still run
    and removes its finalizer from all of them."""
    try:
        custom.delete_namespaced_custom_object(*workload_path(namespace, group))
    except ApiException as error:
        if error.status != 404:
            raise


def ownership_patch(workload: Mapping[str, Any], statefulset: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The JSON patch that makes ``statefulset`` an owner of a Workload ([] if it is one already)."""
    meta = statefulset["metadata"]
    owners = (workload.get("metadata") or {}).get("ownerReferences")
    if any(owner.get("uid") == meta["uid"] for owner in owners or []):
        return []
    owner = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": meta["name"], "uid": meta["uid"]}
    owner["blockOwnerDeletion"] = False  # deleting the StatefulSet never waits for it (kompi deletes it)
    if owners is None:
        return [{"op": "add", "path": "/metadata/ownerReferences", "value": [owner]}]
    # appended on the server, so owners that Kueue adds meanwhile are kept
    return [{"op": "add", "path": "/metadata/ownerReferences/-", "value": owner}]


def template_group(statefulset: Mapping[str, Any]) -> str | None:
    """The pod group that the StatefulSet's template names (None without kompi:queue)."""
    labels = statefulset["spec"].get("template", {}).get("metadata", {}).get("labels", {})
    return None if GROUP_LABEL not in labels else str(labels[GROUP_LABEL])


@dataclass(frozen=True)
class StatefulSetWorkloads:
    """The Workloads of one StatefulSet's pod groups, through ``calls`` (which retries until its deadline)."""

    custom: client.CustomObjectsApi
    namespace: str
    statefulset: str
    calls: JsonApi
    say: Callable[[str], None]

    def read(self, group: str) -> dict[str, Any] | None:
        """The Workload of pod group ``group``; None if it is not made yet, UNREADABLE if not ours to read."""
        try:
            return self.calls(self.custom.get_namespaced_custom_object, *workload_path(self.namespace, group))
        except ApiException as error:
            if error.status == 404:
                return None
            if error.status == 403:
                return UNREADABLE
            raise

    def hold(self, statefulset: Mapping[str, Any]) -> None:
        """Make the StatefulSet an owner of its current group's Workload, once there is one."""
        group = template_group(statefulset)
        if group is None:
            return
        workload = self.read(group)
        patch = ownership_patch(workload, statefulset) if workload and workload is not UNREADABLE else []
        if not patch:
            return
        patch_call = self.custom.patch_namespaced_custom_object
        try:
            self.calls(patch_call, *workload_path(self.namespace, group), patch, _content_type=JSON_PATCH)
        except ApiException as error:
            if error.status == 404:  # gone since the read: the pods make a new one
                return
            if error.status != 403:
                raise
            self.say(
                f"StatefulSet {self.statefulset}: may not patch Kueue Workload {group} (403): a roll that replaces "
                "all pods at once may queue the cluster again under a new Workload"
            )

    def release_old(self, statefulset: Mapping[str, Any], older: list[dict[str, Any]]) -> None:
        """Delete the Workloads of the groups that the StatefulSet's template no longer names. A resize gives
        the pods a new group; the old group's Workload holds its quota (and, in an older Kueue, its finalizer
        the deleted pods) until it is deleted, Kueue's way to end a serving group, and the new group cannot be
        admitted beside it when the quota is short. The old groups are those of the ``older`` pods (the
        controller may have replaced them all before they were listed) and of the Workloads it owns."""
        current = template_group(statefulset)
        old = {found[1] for pod in older if (found := group_of(pod))}
        old |= self._owned(statefulset, say_forbidden=current is not None)
        for group in sorted(old - {current}):
            delete_workload(self.custom, self.namespace, group)

    def _owned(self, statefulset: Mapping[str, Any], say_forbidden: bool) -> set[str]:
        """The names of the Workloads in the namespace that the StatefulSet owns."""
        uid = statefulset["metadata"].get("uid")
        try:
            found = self.calls(self.custom.list_namespaced_custom_object, *workloads_path(self.namespace))
        except ApiException as error:
            if error.status == 403 and say_forbidden:
                self.say(
                    f"StatefulSet {self.statefulset}: may not list Kueue Workloads (403): a Workload of an older "
                    "size that its pods no longer name stays until the StatefulSet is deleted"
                )
            if error.status in (403, 404):  # 404: Kueue is not installed
                return set()
            raise
        return {
            str(workload["metadata"]["name"])
            for workload in found.get("items", [])
            if any(owner.get("uid") == uid for owner in workload["metadata"].get("ownerReferences") or [])
        }
