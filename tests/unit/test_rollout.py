"""The program's rollout step against a scripted API: what it deletes, what it waits for, when it gives up."""

from __future__ import annotations

import itertools
import json
import threading
from dataclasses import dataclass, field
from typing import Any

import pytest
import urllib3
from kubernetes.client.exceptions import ApiException

from kompi_components.contract import CANNOT_SUCCEED_EXIT
from kompi_components.kube.rollout import (
    GIVE_UP_SECONDS,
    NODE_CHECK_SECONDS,
    PODS_SECONDS,
    REVISION_LABEL,
    Rollout,
    RolloutError,
)

UIDS = itertools.count()
SELECTOR = {"app.kubernetes.io/instance": "c", "app.kubernetes.io/component": "worker"}


def pod(ordinal: int, revision: str, ready: bool = True, waiting: str | None = None) -> dict[str, Any]:
    status: dict[str, Any] = {"phase": "Running" if ready else "Pending"}
    status["conditions"] = [{"type": "Ready", "status": "True" if ready else "False"}]
    if waiting:
        status["containerStatuses"] = [{"name": "mpi", "state": {"waiting": {"reason": waiting, "message": "m"}}}]
    labels = SELECTOR | {REVISION_LABEL: revision}
    meta = {"name": f"c-worker-{ordinal}", "uid": f"{revision}-{ordinal}-{next(UIDS)}", "labels": labels}
    return {"metadata": meta, "status": status}


class _Response:
    def __init__(self, body: dict[str, Any]) -> None:
        self.data = json.dumps(body).encode()


@dataclass
class FakeApi:
    """A StatefulSet and its pods; deleting pods makes the controller's replacements (``replacement``)."""

    pods: list[dict[str, Any]]
    revision: str = "new"
    generation: int = 2
    observed_after: int = 0  # reads before the controller has seen the latest generation
    replacement: Any = None  # ordinal -> the pod the controller makes, default a Ready one of the revision
    deleted: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    reads: int = 0
    unreachable_reads: int = 0  # the first reads find no API server
    lists: int = 0
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)  # missing: deleted
    node_reads: int = 0
    events: list[dict[str, Any]] = field(default_factory=list)

    def read_namespaced_stateful_set(self, name: str, namespace: str, **_: object) -> _Response:
        self.reads += 1
        if self.reads <= self.unreachable_reads:
            raise urllib3.exceptions.MaxRetryError(None, "/apis", "connection refused")  # type: ignore[arg-type]
        observed = self.generation if self.reads > self.observed_after else self.generation - 1
        updated = [item for item in self.pods if item["metadata"]["labels"][REVISION_LABEL] == self.revision]
        ready = [item for item in self.pods if item["status"]["conditions"][0]["status"] == "True"]
        status = {"observedGeneration": observed, "updateRevision": self.revision, "replicas": len(self.pods)}
        status |= {"updatedReplicas": len(updated), "readyReplicas": len(ready)}
        meta = {"name": name, "generation": self.generation}
        spec = {"replicas": len(self.pods), "selector": {"matchLabels": SELECTOR}}
        return _Response({"metadata": meta, "spec": spec, "status": status})

    def list_namespaced_pod(self, namespace: str, label_selector: str, **_: object) -> _Response:
        self.lists += 1
        return _Response({"items": self.pods})

    def read_node(self, name: str, **_: object) -> _Response:
        self.node_reads += 1
        if name not in self.nodes:
            raise ApiException(status=404, reason="Not Found")
        return _Response(self.nodes[name])

    def list_namespaced_event(self, namespace: str, field_selector: str, **_: object) -> _Response:
        reason = dict(term.split("=") for term in field_selector.split(","))["reason"]
        return _Response({"items": [event for event in self.events if event["reason"] == reason]})

    def delete_namespaced_pod(self, name: str, namespace: str, body: Any, **_: object) -> _Response:
        with self.lock:
            index = next(i for i, item in enumerate(self.pods) if item["metadata"]["name"] == name)
            if self.pods[index]["metadata"]["uid"] != body.preconditions.uid:
                raise ApiException(status=409, reason="Conflict")  # what the API server says
            self.deleted.append(name)
            make = self.replacement or (lambda ordinal: pod(ordinal, self.revision))
            self.pods[index] = make(index)
        return _Response({})


@dataclass
class FakeClock:
    now: float = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def _rollout(clock: FakeClock, timeout: float = 600) -> Rollout:
    return Rollout("ns", "c-worker", timeout, clock=clock, sleep=clock.sleep)


def test_every_pod_of_an_older_revision_is_deleted_and_only_those() -> None:
    api = FakeApi([pod(0, "old"), pod(1, "old"), pod(2, "new")])
    replaced = _rollout(FakeClock()).run(api, api)  # type: ignore[arg-type]
    assert replaced == 2
    assert sorted(api.deleted) == ["c-worker-0", "c-worker-1"]


def test_a_delete_never_takes_the_replacement_that_has_the_same_name() -> None:
    api = FakeApi([pod(0, "old")])
    rollout = _rollout(FakeClock())
    (old,) = api.pods
    rollout._delete(api, old, deadline=10)  # type: ignore[arg-type]
    rollout._delete(api, old, deadline=10)  # a retry, after the controller made the new pod-0
    assert api.deleted == ["c-worker-0"] and _revision_of(api.pods[0]) == "new"


def _revision_of(item: dict[str, Any]) -> str:
    return str(item["metadata"]["labels"][REVISION_LABEL])


def test_nothing_is_deleted_when_every_pod_runs_the_current_template() -> None:
    api = FakeApi([pod(0, "new"), pod(1, "new")])
    assert _rollout(FakeClock()).run(api, api) == 0  # type: ignore[arg-type]
    assert api.deleted == []


def test_it_waits_until_the_controller_has_seen_the_new_spec() -> None:
    api = FakeApi([pod(0, "old")], observed_after=3)
    _rollout(FakeClock()).run(api, api)  # type: ignore[arg-type]
    assert api.reads > 3 and api.deleted  # the revision it acted on was the new generation's


def test_while_the_status_says_not_yet_the_pods_are_listed_only_now_and_then() -> None:
    clock = FakeClock()
    api = FakeApi([pod(0, "old")])
    pending = pod(0, "new", ready=False)
    api.replacement = lambda ordinal: pending
    with pytest.raises(RolloutError):
        _rollout(clock, timeout=60).run(api, api)  # type: ignore[arg-type]
    assert api.reads > 100 and api.lists <= 60 / PODS_SECONDS + 3


def test_an_api_server_that_does_not_answer_for_a_while_is_asked_again() -> None:
    clock = FakeClock()
    api = FakeApi([pod(0, "old")], unreachable_reads=20)
    assert _rollout(clock).run(api, api) == 1  # type: ignore[arg-type]
    assert clock.now >= 20 * 0.5
    gone = FakeApi([pod(0, "old")], unreachable_reads=10**6)
    with pytest.raises(RolloutError, match="the API server does not answer"):
        _rollout(FakeClock(), timeout=30).run(gone, gone)  # type: ignore[arg-type]


def test_a_pod_that_cannot_pull_fails_the_rollout_after_a_minute_naming_it() -> None:
    clock = FakeClock()
    api = FakeApi([pod(0, "old"), pod(1, "old")])
    api.replacement = lambda ordinal: pod(
        ordinal, "new", ready=ordinal == 0, waiting="ImagePullBackOff" if ordinal else None
    )
    with pytest.raises(RolloutError, match=r"1 of 2 pods cannot start .*c-worker-1 container mpi: ImagePullBackOff"):
        _rollout(clock).run(api, api)  # type: ignore[arg-type]
    assert GIVE_UP_SECONDS <= clock.now < GIVE_UP_SECONDS + PODS_SECONDS + 1


def test_kompi_stuck_pod_timeout_seconds_sets_how_long_a_stuck_pod_is_waited_for() -> None:
    clock = FakeClock()
    api = FakeApi([pod(0, "old")])
    api.replacement = lambda ordinal: pod(ordinal, "new", ready=False, waiting="CrashLoopBackOff")
    rollout = Rollout("ns", "c-worker", 600, give_up_seconds=10, clock=clock, sleep=clock.sleep)
    with pytest.raises(RolloutError, match=r"1 of 1 pods cannot start \(10 s in the same state\)"):
        rollout.run(api, api)  # type: ignore[arg-type]
    assert 10 <= clock.now < 10 + PODS_SECONDS + 1


def test_a_pull_that_alternates_between_its_two_failures_is_one_state() -> None:
    clock = FakeClock()

    class Alternating(FakeApi):
        def list_namespaced_pod(self, namespace: str, label_selector: str, **kwargs: object) -> _Response:
            reason = "ErrImagePull" if self.lists % 2 else "ImagePullBackOff"
            self.pods = [pod(0, "new", ready=False, waiting=reason)]
            return super().list_namespaced_pod(namespace, label_selector, **kwargs)

    api = Alternating([pod(0, "old")])
    with pytest.raises(RolloutError, match=r"1 of 1 pods cannot start .*c-worker-0 container mpi: (ErrImagePull|Ima)"):
        _rollout(clock).run(api, api)  # type: ignore[arg-type]
    assert clock.now < GIVE_UP_SECONDS + 2 * PODS_SECONDS


def test_a_crash_looping_init_container_is_one_state_and_its_last_words_are_quoted() -> None:
    """Between two back-offs the kubelet shows the init container as exited: still the same crash loop."""
    clock = FakeClock()
    said = "kompi-fetch-code: cannot fetch git://git/app.git at main: no such branch, tag or commit"
    exited = {"terminated": {"exitCode": 1, "reason": "Error", "message": said + "\n"}}
    backing_off = {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 20s restarting failed container"}}

    class CrashLooping(FakeApi):
        def list_namespaced_pod(self, namespace: str, label_selector: str, **kwargs: object) -> _Response:
            state = exited if self.lists % 2 else backing_off
            fetcher = {"name": "fetch-app", "state": state, "lastState": exited}
            starting = pod(0, "new", ready=False)
            starting["status"]["initContainerStatuses"] = [fetcher]
            self.pods = [starting]
            return super().list_namespaced_pod(namespace, label_selector, **kwargs)

    api = CrashLooping([pod(0, "old")])
    with pytest.raises(RolloutError) as raised:
        _rollout(clock).run(api, api)  # type: ignore[arg-type]
    assert "1 of 1 pods cannot start" in str(raised.value)
    assert "c-worker-0 container fetch-app: CrashLoopBackOff" in str(raised.value)
    assert f"last exit 1: {said}" in str(raised.value)
    assert clock.now < GIVE_UP_SECONDS + 2 * PODS_SECONDS


def test_a_container_that_says_no_restart_can_mend_it_fails_the_rollout_at_once() -> None:
    """kompi-fetch-code exits CANNOT_SUCCEED_EXIT for a ref that does not exist: no minute of back-offs."""
    clock = FakeClock()
    said = "kompi-fetch-code: cannot fetch git://git/app.git at v9: no such branch, tag or commit"
    exited = {"terminated": {"exitCode": CANNOT_SUCCEED_EXIT, "reason": "Error", "message": said + "\n"}}
    backing_off = {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 10s restarting failed container"}}
    api = FakeApi([pod(0, "old"), pod(1, "old")])

    def replacement(ordinal: int) -> dict[str, Any]:
        made = pod(ordinal, "new", ready=False)
        state = exited if ordinal else backing_off  # the exit itself, or the back-off after it
        made["status"]["initContainerStatuses"] = [{"name": "fetch-app", "state": state, "lastState": exited}]
        return made

    api.replacement = replacement
    with pytest.raises(RolloutError) as raised:
        _rollout(clock).run(api, api)  # type: ignore[arg-type]
    assert "2 of 2 pods cannot start (a failure no restart can mend)" in str(raised.value)
    assert (
        f"c-worker-1 container fetch-app: CrashLoopBackOff: exited, to be restarted (it keeps exiting, last exit "
        f"{CANNOT_SUCCEED_EXIT}: {said}" in str(raised.value)
    )
    assert clock.now < PODS_SECONDS  # the first listing of the pods


def test_an_exit_that_a_restart_may_mend_is_watched_for_a_minute_first() -> None:
    clock = FakeClock()
    exited = {"terminated": {"exitCode": 1, "reason": "Error", "message": "cannot fetch: Connection refused"}}
    api = FakeApi([pod(0, "old")])

    def replacement(ordinal: int) -> dict[str, Any]:
        made = pod(ordinal, "new", ready=False)
        made["status"]["initContainerStatuses"] = [{"name": "fetch-app", "state": exited}]
        return made

    api.replacement = replacement
    with pytest.raises(RolloutError, match=r"1 of 1 pods cannot start \(60 s in the same state\)"):
        _rollout(clock).run(api, api)  # type: ignore[arg-type]
    assert clock.now >= GIVE_UP_SECONDS


def _replicas(response: _Response, replicas: int) -> _Response:
    """The StatefulSet asking for ``replicas``, whatever pods exist."""
    body = json.loads(response.data)
    body["spec"]["replicas"] = replicas
    return _Response(body)


def test_a_pod_the_namespace_refuses_to_create_fails_the_rollout_quoting_the_refusal() -> None:
    """The StatefulSet controller cannot create worker-1 (its event says why); worker-0 exists and starts."""
    clock = FakeClock()
    refusal = (
        'create Pod c-worker-1 in StatefulSet c-worker failed error: pods "c-worker-1" is forbidden: violates '
        'PodSecurity "restricted:latest": host namespaces (hostNetwork=true)'
    )
    other = 'create Pod c-worker-7 in StatefulSet c-worker failed error: pods "c-worker-7" is forbidden: quota'
    events = [{"reason": "FailedCreate", "message": message} for message in (other, refusal)]

    class Refused(FakeApi):
        def list_namespaced_pod(self, namespace: str, label_selector: str, **kwargs: object) -> _Response:
            self.pods = [pod(0, "new", ready=False)]  # worker-1 was never made
            return super().list_namespaced_pod(namespace, label_selector, **kwargs)

        def read_namespaced_stateful_set(self, name: str, namespace: str, **kwargs: object) -> _Response:
            return _replicas(super().read_namespaced_stateful_set(name, namespace, **kwargs), 2)

    api = Refused([pod(0, "old"), pod(1, "old")], events=events)
    with pytest.raises(RolloutError) as raised:
        _rollout(clock).run(api, api)  # type: ignore[arg-type]
    said = str(raised.value)
    assert "1 of 2 pods cannot start (60 s in the same state): c-worker-1 is not created (FailedCreate: " in said
    assert 'violates PodSecurity "restricted:latest": host namespaces' in said and "quota" not in said
    assert "kubectl -n ns describe statefulset c-worker" in said
    assert clock.now < NODE_CHECK_SECONDS + GIVE_UP_SECONDS + 2 * PODS_SECONDS


def test_a_pod_not_created_yet_without_a_refusal_is_waited_for() -> None:
    clock = FakeClock()

    class Slow(FakeApi):
        def list_namespaced_pod(self, namespace: str, label_selector: str, **kwargs: object) -> _Response:
            self.pods = [] if clock.now < 200 else [pod(0, "new")]  # the controller is slow, not refused
            return super().list_namespaced_pod(namespace, label_selector, **kwargs)

        def read_namespaced_stateful_set(self, name: str, namespace: str, **kwargs: object) -> _Response:
            return _replicas(super().read_namespaced_stateful_set(name, namespace, **kwargs), 1)

    api = Slow([pod(0, "old")])
    _rollout(clock).run(api, api)  # type: ignore[arg-type]
    assert clock.now >= 200


def _unschedulable(scheduler: str | None = None) -> dict[str, Any]:
    pending = pod(0, "new", ready=False)
    message = "0/4 nodes are available: 4 Insufficient nvidia.com/gpu."
    condition = {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}
    pending["status"]["conditions"].append(condition)
    if scheduler:
        pending["spec"] = {"schedulerName": scheduler}
    return pending


def test_a_pod_no_node_can_take_fails_the_rollout_after_a_minute_with_the_schedulers_words() -> None:
    clock = FakeClock()
    api = FakeApi([pod(0, "old")])
    api.replacement = lambda ordinal: _unschedulable()
    with pytest.raises(RolloutError) as failed:
        _rollout(clock).run(api, api)  # type: ignore[arg-type]
    assert "1 of 1 pods cannot start (60 s in the same state): c-worker-0 is not scheduled (Unschedulable: 0/4 " in str(
        failed.value
    )
    assert "add nodes, or ask for less (kompi:workers, kompi:gpusPerWorker" in str(failed.value)
    assert GIVE_UP_SECONDS <= clock.now < GIVE_UP_SECONDS + PODS_SECONDS + 1


@pytest.mark.parametrize("waits_for", ["a gang scheduler", "an autoscaler"])
def test_a_pod_that_waits_for_its_gang_or_for_new_nodes_is_waited_for_until_the_timeout(waits_for: str) -> None:
    clock = FakeClock()
    api = FakeApi([pod(0, "old")])
    if waits_for == "a gang scheduler":
        api.replacement = lambda ordinal: _unschedulable(scheduler="scheduler-plugins-scheduler")
    else:
        api.replacement = lambda ordinal: _unschedulable()
        api.events = [{"reason": "TriggeredScaleUp", "involvedObject": {"kind": "Pod", "name": "c-worker-0"}}]
    with pytest.raises(RolloutError, match=r"1 of 1 pods not Ready .* after 300 s: c-worker-0 is not scheduled"):
        _rollout(clock, timeout=300).run(api, api)  # type: ignore[arg-type]
    assert clock.now >= 300


def _bound(node: str) -> dict[str, Any]:
    starting = pod(0, "new", ready=False, waiting="ContainerCreating")
    starting["spec"] = {"nodeName": node}
    return starting


def _node(ready: str) -> dict[str, Any]:
    return {"metadata": {"name": "n"}, "status": {"conditions": [{"type": "Ready", "status": ready}]}}


@pytest.mark.parametrize("node", [None, "Unknown", "False"])
def test_a_pod_on_a_node_that_is_gone_or_not_ready_fails_the_rollout_naming_the_node(node: str | None) -> None:
    clock = FakeClock()
    api = FakeApi([pod(0, "old")], nodes={} if node is None else {"n": _node(node)})
    api.replacement = lambda ordinal: _bound("n")
    said = (
        r"is gone \(its pods go with it"
        if node is None
        else r"is not Ready \(.*kubectl taint node n node.kubernetes.io/out-of-service"
    )
    with pytest.raises(RolloutError, match=rf"c-worker-0 is on node n, which {said}"):
        _rollout(clock).run(api, api)  # type: ignore[arg-type]
    assert clock.now < GIVE_UP_SECONDS + 2 * PODS_SECONDS + 10


def test_a_pod_that_is_starting_on_a_ready_node_is_waited_for_and_its_node_read_only_now_and_then() -> None:
    clock = FakeClock()
    api = FakeApi([pod(0, "old")], nodes={"n": _node("True")})
    api.replacement = lambda ordinal: _bound("n")
    with pytest.raises(RolloutError, match=r"not Ready on the current template after 300 s"):
        _rollout(clock, timeout=300).run(api, api)  # type: ignore[arg-type]
    assert 0 < api.node_reads <= 300 / PODS_SECONDS + 1


@dataclass
class Released(FakeApi):
    """A one-shot run's workers after its Job released them: the StatefulSet at 0 replicas until scaled."""

    replicas: int = 0
    scaled: list[int] = field(default_factory=list)

    def read_namespaced_stateful_set(self, name: str, namespace: str, **kwargs: object) -> _Response:
        return _replicas(super().read_namespaced_stateful_set(name, namespace, **kwargs), self.replicas)

    def patch_namespaced_stateful_set_scale(self, name: str, namespace: str, body: Any, **_: object) -> _Response:
        assert (name, namespace) == ("c-worker", "ns")
        self.replicas = body["spec"]["replicas"]
        self.scaled.append(self.replicas)
        self.pods = [pod(ordinal, self.revision) for ordinal in range(self.replicas)]
        return _Response({})


@pytest.mark.parametrize(("restore", "scaled"), [(2, [2]), (None, [])])
def test_a_new_run_gets_back_the_workers_its_job_released_before_the_wait(
    restore: int | None, scaled: list[int]
) -> None:
    """Under Kueue the new run's Job pod, gated until its whole group exists, cannot scale them itself."""
    api = Released([])
    said: list[str] = []
    rollout = Rollout("ns", "c-worker", 600, restore_replicas=restore, say=said.append, clock=FakeClock())
    assert rollout.run(api, api) == 0  # type: ignore[arg-type]
    assert api.scaled == scaled
    assert len(api.pods) == len(scaled) * 2
    assert said == (["StatefulSet c-worker: 0 replicas, scaled to 2"] if scaled else [])


def test_workers_at_their_count_are_not_scaled_again() -> None:
    api = Released([pod(0, "new"), pod(1, "new")], replicas=2)
    Rollout("ns", "c-worker", 600, restore_replicas=2, clock=FakeClock()).run(api, api)  # type: ignore[arg-type]
    assert api.scaled == []
