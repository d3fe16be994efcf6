"""Move every pod of a StatefulSet to its current template at once, then wait until all are Ready.

An MPI job needs every pod, so a cluster rolled one pod at a time (the StatefulSet controller's
RollingUpdate) is down for N restarts instead of one. kompi's StatefulSets are ``OnDelete``: the
controller never replaces a pod by itself, it only makes each missing pod from the current template.
So right after a StatefulSet takes up a new template, every pod of an older revision is deleted here
in one call, and Parallel pod management starts their replacements all at once. (Under RollingUpdate
the controller began its own roll as soon as the template changed; on a busy machine it had replaced
every pod, one after the other, before this step ran. ``maxUnavailable: 100%`` needs the
MaxUnavailableStatefulSet feature gate, off by default through Kubernetes 1.36.)

The wait also checks what pulumi-kubernetes 4.25 does not: that the controller has seen the new
generation (its status would otherwise still describe the old one).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from kompi_components.errors import KompiError
from kompi_components.kube import kueue_status, stuck, unmanaged
from kompi_components.kube.api import UNREADABLE, ApiNotAnswering, JsonApi, pod_selector, read_node
from kompi_components.kube.conditions import is_ready
from kompi_components.kube.workloads import StatefulSetWorkloads, delete_workload, template_group
from kompi_components.manifests.queue import GROUP_LABEL, TOTAL_COUNT_ANNOTATION

MERGE_PATCH = "application/merge-patch+json"  # (a null removes the field)
REVISION_LABEL = "controller-revision-hash"  # set by the StatefulSet controller on each of its pods
POLL_SECONDS = 0.5
PODS_SECONDS = 5.0  # how often the pods themselves are listed while the StatefulSet's status says "not yet"
DELETE_WORKERS = 32  # concurrent pod deletions (ClusterAccess gives the client as many connections)
# A pod that will not start by waiting (kompi_components.kube.stuck) fails the rollout after this long in
# the same state, instead of at the timeout (kompi:stuckPodTimeoutSeconds).
GIVE_UP_SECONDS = 60.0
# A pod not Ready after this long has its node looked at (a pod that is starting is on a Ready node).
NODE_CHECK_SECONDS = 10.0


def _to_stderr(line: str) -> None:
    print(f"[kompi] {line}", file=sys.stderr, flush=True)


class RolloutError(KompiError):
    """The StatefulSet's pods did not all become Ready on the current template in time."""


@dataclass(frozen=True)
class Rollout:
    namespace: str
    statefulset: str
    timeout_seconds: float
    # With kompi:queue: how long the pods may wait for Kueue's admission. The rollout's own timeout counts
    # from admission; meanwhile Kueue's reason is said whenever it changes.
    queue_timeout_seconds: float | None = None
    # A one-shot run's workers, whose replicas its Job owns (it scales them to 0 when it succeeded): a new
    # run gets them back here, before the wait. Its Job's pod cannot do it under Kueue: gated until the
    # whole group, workers included, exists.
    restore_replicas: int | None = None
    # How long a pod that will not start by waiting may stay so (kompi:stuckPodTimeoutSeconds).
    give_up_seconds: float = GIVE_UP_SECONDS
    # A one-shot run's Job, whose pod is one of the pod group's members (kompi:queue): Kueue's Job integration
    # must not have taken it (kube/unmanaged.py).
    launcher_job: str | None = None
    # That Job is new (made or replaced since the last roll): a new run, whose pod group's Workload, if a
    # former run of the same pods left it Finished, is deleted so that Kueue makes it again (it admits no new
    # pod into a Finished one).
    new_run: bool = False
    say: Callable[[str], None] = field(default=_to_stderr, repr=False)

    clock: Callable[[], float] = field(default=time.monotonic, repr=False)
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)

    def run(
        self,
        apps: client.AppsV1Api,
        core: client.CoreV1Api,
        custom: client.CustomObjectsApi | None = None,
        batch: client.BatchV1Api | None = None,
    ) -> int:
        """Delete the pods of older revisions, wait for every replica; returns how many were deleted. ``custom``
        reads Kueue's workloads (kompi:queue), ``batch`` the one-shot run's Job."""
        try:
            return self._run(apps, core, custom, batch)
        except ApiNotAnswering as error:
            raise RolloutError(f"StatefulSet {self.statefulset}: {error}") from None

    def _run(
        self,
        apps: client.AppsV1Api,
        core: client.CoreV1Api,
        custom: client.CustomObjectsApi | None,
        batch: client.BatchV1Api | None,
    ) -> int:
        deadline = self.clock() + self.timeout_seconds
        statefulset = self._observed(apps, deadline)
        if custom is not None and batch is not None:
            self._check_launcher(batch, statefulset, deadline)
        if custom is not None and self.new_run:
            self._start_run(custom, statefulset, deadline)
        revision = statefulset["status"]["updateRevision"]
        selector = pod_selector(statefulset)
        pods = self._api(deadline, core.list_namespaced_pod, self.namespace, label_selector=selector)
        stale = [pod for pod in pods["items"] if _revision(pod) != revision and not _terminating(pod)]
        if custom is not None and stale:  # before its pods go, all at once
            self._workloads(custom, deadline).hold(statefulset)
        # One DELETE each, many at a time: the API server works through a deletecollection one pod after
        # another (--delete-collection-workers, default 1), 512 pods in 35 s on the local cluster.
        with ThreadPoolExecutor(DELETE_WORKERS) as pool:
            list(pool.map(lambda pod: self._delete(core, pod, deadline), stale))
        if custom is not None:  # (the controller may have begun to delete some of them itself)
            older = [pod for pod in pods["items"] if _revision(pod) != revision]
            self._workloads(custom, deadline).release_old(statefulset, older)
        wanted = self.restore_replicas
        if wanted is not None and statefulset["spec"]["replicas"] != wanted:
            self.say(f"StatefulSet {self.statefulset}: {statefulset['spec']['replicas']} replicas, scaled to {wanted}")
            scale = {"spec": {"replicas": wanted}}
            self._api(deadline, apps.patch_namespaced_stateful_set_scale, self.statefulset, self.namespace, scale)
        self._wait_ready(apps, core, custom, selector, deadline)
        if custom is not None:  # admitted now: hold it for the pods that Kueue or a node loss replaces later
            self._workloads(custom, deadline).hold(statefulset)
        return len(stale)

    def _check_launcher(self, batch: client.BatchV1Api, statefulset: dict[str, Any], deadline: float) -> None:
        """Fail at once when Kueue's Job integration took the one-shot Job (its webhook did so as it made it)."""
        if self.launcher_job is None:
            return
        try:
            job = self._api(deadline, batch.read_namespaced_job, self.launcher_job, self.namespace)
        except ApiException as error:
            if error.status in (403, 404):  # not ours to read, or gone: the queue wait says what it can
                return
            raise
        members = statefulset["spec"].get("template", {}).get("metadata", {}).get("annotations", {})
        count = int(members.get(TOTAL_COUNT_ANNOTATION, statefulset["spec"]["replicas"] + 1))
        if taken := unmanaged.job_taken(job, count):
            raise RolloutError(f"StatefulSet {self.statefulset}: {taken}")

    def _start_run(self, custom: client.CustomObjectsApi, statefulset: dict[str, Any], deadline: float) -> None:
        """A new run of the same pods is the same pod group: delete the Workload that a former run left Finished
        (it succeeded, or its pods came back after their end), which Kueue admits no new pod into."""
        group = template_group(statefulset)
        workloads = self._workloads(custom, deadline)
        found = workloads.read(group) if group is not None else None
        if group is None or not found or found is UNREADABLE or not kueue_status.finished(found):
            return
        delete_workload(custom, self.namespace, group)
        self.say(
            f"StatefulSet {self.statefulset}: a new run: deleted the Workload {group} that the last run left Finished"
        )

    def _workloads(self, custom: client.CustomObjectsApi, deadline: float) -> StatefulSetWorkloads:
        return StatefulSetWorkloads(custom, self.namespace, self.statefulset, self._calls(deadline), self.say)

    def _delete(self, core: client.CoreV1Api, pod: dict[str, Any], deadline: float) -> None:
        """Delete this pod and never its replacement (same name): the DELETE names the pod's UID."""
        meta = pod["metadata"]
        this_one = client.V1DeleteOptions(preconditions=client.V1Preconditions(uid=meta["uid"]))
        try:
            self._api(deadline, core.delete_namespaced_pod, meta["name"], self.namespace, body=this_one)
        except ApiException as error:
            if error.status not in (404, 409):  # gone already, or replaced already: what we wanted
                raise

    def _observed(self, apps: client.AppsV1Api, deadline: float) -> dict[str, Any]:
        """The StatefulSet once its controller has computed the status of its latest spec."""
        while True:
            statefulset = self._read(apps, deadline)
            status = statefulset.get("status", {})
            observed = status.get("observedGeneration", 0) >= statefulset["metadata"]["generation"]
            if observed and status.get("updateRevision"):
                return statefulset
            if self.clock() > deadline:
                raise RolloutError(f"StatefulSet {self.statefulset}: its controller did not take up the new spec")
            self.sleep(POLL_SECONDS)

    def _read(self, apps: client.AppsV1Api, deadline: float) -> dict[str, Any]:
        return self._api(deadline, apps.read_namespaced_stateful_set, self.statefulset, self.namespace)

    def _api(self, deadline: float, call: Callable[..., Any], *args: Any, **kwargs: Any) -> dict[str, Any]:
        """``call`` as JSON; an API server that does not answer (restarting, overloaded) is asked again until
        the deadline. (bin/kompi cancels the whole operation itself after 30 s without an answer.)"""
        return self._calls(deadline)(call, *args, **kwargs)

    def _calls(self, deadline: float) -> JsonApi:
        return JsonApi(deadline, self.clock, self.sleep)

    def _wait_ready(
        self,
        apps: client.AppsV1Api,
        core: client.CoreV1Api,
        custom: client.CustomObjectsApi | None,
        selector: str,
        deadline: float,
    ) -> None:
        """Until every replica is Ready on the current revision. The StatefulSet's status says when that may
        be so, cheaply; the pods, listed only then and every PODS_SECONDS (for those that cannot start),
        prove it. Listing 512 pods every poll cost the API server more CPU than the rollout itself."""
        stuck_since: dict[tuple[str, str], float] = {}  # (pod, reason) -> when first seen
        waiting_since: dict[str, float] = {}  # pod -> since when it is not Ready
        listed_at = -PODS_SECONDS
        queue = _QueueWait(self, custom, core)
        while True:
            statefulset = self._read(apps, deadline)  # the replica count may change while we wait (a scale-down)
            revision, replicas = statefulset["status"].get("updateRevision"), statefulset["spec"]["replicas"]
            now = self.clock()
            if not (_status_done(statefulset) or now - listed_at >= PODS_SECONDS or now > deadline):
                self.sleep(POLL_SECONDS)
                continue
            listed_at = now
            pods = self._api(deadline, core.list_namespaced_pod, self.namespace, label_selector=selector)
            by_name = {pod["metadata"]["name"]: pod for pod in pods["items"]}
            expected = [f"{self.statefulset}-{ordinal}" for ordinal in range(replicas)]
            waiting = [name for name in expected if not _done(by_name.get(name), revision)]
            if not waiting:
                return
            if queue.holds([by_name[name] for name in waiting if name in by_name], now, deadline):
                deadline = max(deadline, now + self.timeout_seconds)  # the rollout's own wait starts at admission
                self.sleep(POLL_SECONDS)
                continue
            since = {name: waiting_since.get(name, now) for name in waiting}
            waiting_since = since
            long_waiting = [name for name in waiting if now - since[name] >= NODE_CHECK_SECONDS]
            found = self._stuck(core, [by_name[name] for name in waiting if name in by_name], long_waiting, deadline)
            found |= self._not_created([name for name in long_waiting if name not in by_name], core, deadline)
            stuck_since = {
                (name, held.reason): stuck_since.get((name, held.reason), now) for name, held in found.items()
            }
            final = sorted(name for name, held in found.items() if held.final)
            given_up = sorted(name for (name, _), at in stuck_since.items() if now - at >= self.give_up_seconds)
            given_up = self._without_scale_up(core, given_up, found, deadline)
            if final or given_up:
                raise self._cannot_start(final or given_up, found, replicas, final=bool(final))
            if now > deadline:
                reasons = "; ".join(f"{name} {_why(by_name.get(name), revision)}" for name in waiting[:10])
                more = f" (and {len(waiting) - 10} more)" if len(waiting) > 10 else ""
                raise RolloutError(
                    f"StatefulSet {self.statefulset}: {len(waiting)} of {replicas} pods not Ready on the current "
                    f"template after {self.timeout_seconds:.0f} s: {reasons}{more}"
                )
            self.sleep(POLL_SECONDS)

    def _cannot_start(
        self, names: list[str], found: dict[str, stuck.Stuck], replicas: int, final: bool
    ) -> RolloutError:
        why = "a failure no restart can mend" if final else f"{self.give_up_seconds:.0f} s in the same state"
        reasons = "; ".join(f"{name} {found[name].clause}" for name in names[:10])
        return RolloutError(
            f"StatefulSet {self.statefulset}: {len(names)} of {replicas} pods cannot start ({why}): {reasons}"
        )

    def _stuck(
        self, core: client.CoreV1Api, pods: list[dict[str, Any]], long_waiting: list[str], deadline: float
    ) -> dict[str, stuck.Stuck]:
        """The pods among ``pods`` that will not start by waiting. Their nodes are read only for the pods
        that have waited a while (``long_waiting``)."""
        found: dict[str, stuck.Stuck] = {}
        nodes: dict[str, dict[str, Any] | None] = {}
        for pod in pods:
            name = pod["metadata"]["name"]
            if held := stuck.in_container(pod, self.namespace):
                found[name] = held
            elif (message := stuck.unschedulable(pod)) is not None:
                found[name] = stuck.no_node_fits(message)
            elif name in long_waiting and (node_name := pod.get("spec", {}).get("nodeName")):
                if node_name not in nodes:
                    nodes[node_name] = read_node(self._calls(deadline), core, node_name)
                node = nodes[node_name]
                if node is not UNREADABLE and (lost := stuck.on_lost_node(pod, node)):
                    found[name] = lost
        return found

    def _not_created(self, missing: list[str], core: client.CoreV1Api, deadline: float) -> dict[str, stuck.Stuck]:
        """The pods among ``missing`` (not there after a while) that the API server refused to create."""
        if not missing:
            return {}
        selector = f"involvedObject.kind=StatefulSet,involvedObject.name={self.statefulset},reason={stuck.NOT_CREATED}"
        try:
            events = self._api(deadline, core.list_namespaced_event, self.namespace, field_selector=selector)
        except ApiException as error:
            if error.status != 403:  # may not read events: wait to the timeout, as before
                raise
            return {}
        found = {
            name: stuck.not_created(name, events.get("items", []), self.namespace, self.statefulset) for name in missing
        }
        return {name: held for name, held in found.items() if held}

    def _without_scale_up(
        self, core: client.CoreV1Api, given_up: list[str], found: dict[str, stuck.Stuck], deadline: float
    ) -> list[str]:
        """``given_up`` less the unschedulable pods that an autoscaler is adding nodes for (its events say
        so): those wait to the timeout."""
        if not any(found[name].reason == stuck.UNSCHEDULABLE for name in given_up):
            return given_up
        coming: set[str] = set()
        for reason in stuck.SCALE_UP_REASONS:
            selector = f"involvedObject.kind=Pod,reason={reason}"
            try:
                events = self._api(deadline, core.list_namespaced_event, self.namespace, field_selector=selector)
            except ApiException as error:
                if error.status != 403:
                    raise
                return [name for name in given_up if found[name].reason != stuck.UNSCHEDULABLE]  # cannot tell
            coming |= {event["involvedObject"]["name"] for event in events.get("items", [])}
        return [name for name in given_up if not (found[name].reason == stuck.UNSCHEDULABLE and name in coming)]


@dataclass
class _QueueWait:
    """The pods' wait at Kueue's admission gate: says Kueue's reason as it changes, and fails the rollout
    when the wait outlasts ``queue_timeout_seconds``."""

    rollout: Rollout
    custom: client.CustomObjectsApi | None
    core: client.CoreV1Api
    since: float | None = None
    said: str | None = None
    unmade_since: float | None = None  # since when the group's pods wait with no Workload

    def holds(self, waiting: list[dict[str, Any]], now: float, deadline: float) -> bool:
        """Some of ``waiting`` are gated: say why (when it changed) and keep waiting."""
        gated = [pod for pod in waiting if kueue_status.gated(pod)]
        found = next((labels for pod in gated if (labels := kueue_status.group_of(pod))), None)
        if found is None:
            self.since = None
            return False
        queue, group = found
        members = int(gated[0]["metadata"].get("annotations", {}).get(TOTAL_COUNT_ANNOTATION, len(waiting)))
        workload = self._workload(group, deadline)
        name = self.rollout.statefulset
        if never := kueue_status.never_admitted(workload):
            verb, why = never
            raise RolloutError(
                f"StatefulSet {name}: Kueue will not {verb} its {len(gated)} pods (kompi:queue {queue}): {why}"
            )
        self._unmade(workload, group, members, now, deadline)
        state = kueue_status.queue_state(queue, workload, members)
        if state != self.said:
            self.rollout.say(f"StatefulSet {name}: {state}")
            self.said = state
        self.since = now if self.since is None else self.since
        limit = self.rollout.queue_timeout_seconds
        if limit is not None and now - self.since > limit:
            raise RolloutError(
                f"StatefulSet {name}: {len(gated)} pods not admitted by Kueue after {limit:.0f} s (kompi:queue "
                f"{queue}, kompi:queueTimeoutSeconds): {state.split(': ', 1)[1]}"
            )
        return True

    def _unmade(self, workload: dict[str, Any] | None, group: str, members: int, now: float, deadline: float) -> None:
        """Fail when Kueue has made no Workload for the stuck-pod timeout although every member of the group
        exists and is gated (kube/unmanaged.py): a platform's setting, not a wait."""
        if workload is not None:
            self.unmade_since = None
            return
        self.unmade_since = now if self.unmade_since is None else self.unmade_since
        waited = now - self.unmade_since
        if waited < self.rollout.give_up_seconds:
            return
        selector = f"{GROUP_LABEL}={group}"
        found = self.rollout._api(
            deadline, self.core.list_namespaced_pod, self.rollout.namespace, label_selector=selector
        )
        present = [pod for pod in found["items"] if not _terminating(pod)]
        if len(present) >= members and all(kueue_status.gated(pod) for pod in present):
            line = unmanaged.unmanaged_namespace(self.rollout.namespace, group, members, waited)
            raise RolloutError(f"StatefulSet {self.rollout.statefulset}: {line}")

    def _workload(self, group: str, deadline: float) -> dict[str, Any] | None:
        # (not made yet, or not ours to read: the pods say they wait)
        return None if self.custom is None else self.rollout._workloads(self.custom, deadline).read(group)


def hand_over(apps: client.AppsV1Api, namespace: str, name: str, strategy: dict[str, Any], calls: JsonApi) -> bool:
    """Give StatefulSet ``name`` the ``updateStrategy`` of kompi's manifest (OnDelete) before Pulumi applies the
    rest; returns whether it changed one. One made by an earlier kompi carries the defaulted
    ``rollingUpdate``, which the API server refuses beside OnDelete and which neither an apply nor Pulumi's own
    dry run can take away (kubernetes/kubernetes#100151): a merge patch with ``rollingUpdate: null`` does.
    A StatefulSet not there yet is made with the strategy."""
    try:
        live = calls(apps.read_namespaced_stateful_set, name, namespace)
    except ApiException as error:
        if error.status == 404:
            return False
        raise
    if live.get("spec", {}).get("updateStrategy") == strategy:
        return False
    patch = {"spec": {"updateStrategy": {"rollingUpdate": None} | strategy}}
    calls(apps.patch_namespaced_stateful_set, name, namespace, patch, _content_type=MERGE_PATCH)
    return True


def _status_done(statefulset: dict[str, Any]) -> bool:
    """The controller counts every replica Ready and on the update revision (for this generation)."""
    status, replicas = statefulset.get("status", {}), statefulset["spec"]["replicas"]
    observed = status.get("observedGeneration", 0) >= statefulset["metadata"]["generation"]
    counts = (status.get("replicas", 0), status.get("readyReplicas", 0), status.get("updatedReplicas", 0))
    return observed and counts == (replicas, replicas, replicas)


def _revision(pod: dict[str, Any]) -> str | None:
    return pod["metadata"].get("labels", {}).get(REVISION_LABEL)  # type: ignore[no-any-return]


def _terminating(pod: dict[str, Any]) -> bool:
    return bool(pod["metadata"].get("deletionTimestamp"))


def _done(pod: dict[str, Any] | None, revision: str | None) -> bool:
    return pod is not None and _revision(pod) == revision and not _terminating(pod) and is_ready(pod)


def _why(pod: dict[str, Any] | None, revision: str | None) -> str:
    """One clause on what keeps a pod from being Ready: what `kubectl describe` would show first."""
    if pod is None:
        return "does not exist yet"
    if _terminating(pod):
        return "is still terminating"
    if _revision(pod) != revision:
        return "runs the previous template"
    status = pod.get("status", {})
    for condition in status.get("conditions", []):
        if condition["type"] == "PodScheduled" and condition["status"] == "False":
            return f"is not scheduled ({condition.get('reason')}: {condition.get('message', '')})"
    for container in stuck.container_statuses(pod):
        waiting = container.get("state", {}).get("waiting")
        if waiting and waiting.get("reason") not in (None, "ContainerCreating", "PodInitializing"):
            return f"container {container['name']}: {waiting['reason']}: {waiting.get('message', '')}".rstrip(": ")
    return f"is {status.get('phase', 'Pending')}, not Ready"
