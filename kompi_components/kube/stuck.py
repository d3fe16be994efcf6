"""Why a pod will not start by waiting, and what fixes it: the rollout step fails on these after a minute
instead of at its timeout.

A pod is stuck when a container cannot be pulled, configured or kept running; when no node can take it
(the default scheduler says Unschedulable and no autoscaler is adding nodes for it); or when the node it
is bound to is gone or not Ready. A gang (another scheduler) that waits is waiting for its queue, and a
pod that an autoscaler is making room for is waiting for its node: both are waited for to the timeout.

A container that exits with contract.CANNOT_SUCCEED_EXIT (sysexits' EX_CONFIG, as kompi-fetch-code does
for a ref that does not exist) has said that no restart can mend it: its pod is stuck at once
(``Stuck.final``), with no minute of restarts to watch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kompi_components.contract import CANNOT_SUCCEED_EXIT
from kompi_components.kube.conditions import is_lost

DEFAULT_SCHEDULER = "default-scheduler"
# Events that say nodes are coming for a pod: cluster-autoscaler's, and Karpenter's nomination.
SCALE_UP_REASONS = ("TriggeredScaleUp", "Nominated")
PULL_REASONS = frozenset({"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull"})
START_REASONS = frozenset({"CreateContainerConfigError", "CreateContainerError", "RunContainerError"})
CRASH = "CrashLoopBackOff"
CRASH_REASONS = frozenset({CRASH})
UNSCHEDULABLE = "Unschedulable"
NODE_LOST = "NodeNotReady"
NOT_CREATED = "FailedCreate"  # the StatefulSet controller's event when the API server refuses its pod
OUT_OF_SERVICE_TAINT = "node.kubernetes.io/out-of-service=nodeshutdown:NoExecute"


CANNOT_PULL = "ImagePull"  # the kubelet alternates ErrImagePull and ImagePullBackOff: one state


@dataclass(frozen=True)
class Stuck:
    reason: str  # CANNOT_PULL, a container's other waiting reason, UNSCHEDULABLE or NODE_LOST
    clause: str  # what holds the pod and how to fix it, to follow the pod's name
    final: bool = False  # the container said no restart can mend it: no need to watch it for a minute


def container_statuses(pod: Mapping[str, Any]) -> list[dict[str, Any]]:
    status = pod.get("status", {})
    return list(status.get("initContainerStatuses", [])) + list(status.get("containerStatuses", []))


def in_container(pod: Mapping[str, Any], namespace: str) -> Stuck | None:
    """A container of ``pod`` that will not start by itself, with the fix for its reason."""
    images = {c["name"]: c.get("image", "") for c in _containers(pod)}
    for container in container_statuses(pod):
        waiting = container.get("state", {}).get("waiting", {})
        reason, name = waiting.get("reason"), container["name"]
        if _exited_with_error(container):
            # between two restarts of a crash loop: the same state as the back-off that follows
            reason, waiting = CRASH, {"message": "exited, to be restarted"}
        told = f"container {name}: {reason}: {waiting.get('message', '')}".rstrip(": ")
        if reason in PULL_REASONS:
            image = images.get(name) or container.get("image", "")
            fix = (
                f"the node cannot pull {image}: build it and push it to a registry the cluster can pull from "
                "(images/build.sh --push REGISTRY), set kompi:image and kompi:imageTag to it, and name its pull "
                "Secret in kompi:imagePullSecrets if the registry needs credentials"
            )
            return Stuck(CANNOT_PULL, f"{told} ({fix})")
        if reason in START_REASONS:
            return Stuck(reason, f"{told} (kubectl -n {namespace} describe pod {_name(pod)} shows what is missing)")
        if reason in CRASH_REASONS:
            logs = f"kubectl -n {namespace} logs {_name(pod)} -c {name} --previous"
            said = _last_words(container)
            return Stuck(reason, f"{told} (it keeps exiting{said}: {logs} shows why)", _cannot_succeed(container))
    return None


def _last_exit(container: Mapping[str, Any]) -> dict[str, Any]:
    """The container's current termination, else its last one (during the back-off that follows it)."""
    state = container.get("state", {})
    return dict(state.get("terminated") or container.get("lastState", {}).get("terminated") or {})


def _cannot_succeed(container: Mapping[str, Any]) -> bool:
    return _last_exit(container).get("exitCode") == CANNOT_SUCCEED_EXIT


def _exited_with_error(container: Mapping[str, Any]) -> bool:
    """The container exited non-zero and the kubelet has not yet said CrashLoopBackOff (kompi's pods always
    restart their containers)."""
    return int(container.get("state", {}).get("terminated", {}).get("exitCode", 0)) != 0


def _last_words(container: Mapping[str, Any]) -> str:
    """ ", last exit N: <the last line of its termination message>" ("" when it left none): what a fetcher of
    app code or an entrypoint said when it gave up."""
    terminated = _last_exit(container)
    lines = [line.strip() for line in str(terminated.get("message", "")).splitlines() if line.strip()]
    if "exitCode" not in terminated:
        return ""
    return f", last exit {terminated['exitCode']}" + (f": {lines[-1]}" if lines else "")


def unschedulable(pod: Mapping[str, Any]) -> str | None:
    """The default scheduler's message for a pod no node can take (a gang scheduler's queue is waited for)."""
    if pod.get("spec", {}).get("schedulerName", DEFAULT_SCHEDULER) != DEFAULT_SCHEDULER:
        return None
    for condition in pod.get("status", {}).get("conditions", []):
        scheduled = condition["type"] == "PodScheduled"
        if scheduled and condition["status"] == "False" and condition.get("reason") == UNSCHEDULABLE:
            return str(condition.get("message", ""))
    return None


def no_node_fits(message: str) -> Stuck:
    fix = "no node can take it: add nodes, or ask for less (kompi:workers, kompi:gpusPerWorker, the pods' resources)"
    return Stuck(UNSCHEDULABLE, f"is not scheduled ({UNSCHEDULABLE}: {message}) ({fix})")


def not_created(pod_name: str, events: list[dict[str, Any]], namespace: str, statefulset: str) -> Stuck | None:
    """The StatefulSet's latest FailedCreate event that names ``pod_name``: the API server refused the pod
    (the namespace's Pod Security level, a quota, an admission policy), so it does not exist to be waited for."""
    said = [event for event in events if f'"{pod_name}"' in str(event.get("message", ""))]
    if not said:
        return None
    message = str(said[-1]["message"]).strip()
    fix = f"the namespace refuses it: kubectl -n {namespace} describe statefulset {statefulset} shows the whole event"
    return Stuck(NOT_CREATED, f"is not created ({NOT_CREATED}: {message}) ({fix})")


def on_lost_node(pod: Mapping[str, Any], node: Mapping[str, Any] | None) -> Stuck | None:
    """``pod`` is bound to ``node`` (None: the Node object is gone) and that node is not Ready."""
    name = pod.get("spec", {}).get("nodeName")
    if not name or not is_lost(node):
        return None
    if node is None:
        fix = "its pods go with it and are made again on a node with room: add one if none has"
        return Stuck(NODE_LOST, f"is on node {name}, which is gone ({fix})")
    # Not Ready may be a node cut off that still runs the pod: only the operator knows it is off. The taint
    # makes Kubernetes delete its pods (and detach their volumes), and the StatefulSet makes them again.
    fix = (
        f"bring the node back; or, once it is sure to be off, take it out of service: kubectl taint node {name} "
        f"{OUT_OF_SERVICE_TAINT}, and its pods are made again on other nodes"
    )
    return Stuck(NODE_LOST, f"is on node {name}, which is not Ready ({fix})")


def _containers(pod: Mapping[str, Any]) -> list[dict[str, Any]]:
    spec = pod.get("spec", {})
    return list(spec.get("initContainers", [])) + list(spec.get("containers", []))


def _name(pod: Mapping[str, Any]) -> str:
    return str(pod.get("metadata", {}).get("name", ""))
