"""The rollout step with kompi:queue. While Kueue holds the pods at its admission gate it says Kueue's reason
as it changes, waits past its own timeout, and fails with the queue's reason once the queue wait runs out; it
keeps the pod group's Workload across a roll, and deletes the Workloads of older groups after a resize."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException

from kompi_components.kube.api import JsonApi
from kompi_components.kube.kueue_status import queue_state
from kompi_components.kube.rollout import Rollout, RolloutError
from kompi_components.kube.workloads import StatefulSetWorkloads
from kompi_components.manifests.queue import ADMISSION_GATE, GROUP_LABEL, QUEUE_LABEL, TOTAL_COUNT_ANNOTATION
from tests.unit.test_rollout import FakeApi, FakeClock, _Response, pod

GROUP = "c-0123456789"
STATEFULSET_UID = "sts-uid"
SHORT = (
    "couldn't assign flavors to pod set worker: insufficient unused quota for nvidia.com/gpu in flavor f, 4 more needed"
)


def queued(ordinal: int, gate: bool = True) -> dict[str, Any]:
    item = pod(ordinal, "new", ready=not gate)
    item["metadata"]["labels"] |= {QUEUE_LABEL: "team-a", GROUP_LABEL: GROUP}
    item["metadata"]["annotations"] = {TOTAL_COUNT_ANNOTATION: "3"}
    item["spec"] = {"schedulingGates": [{"name": ADMISSION_GATE}]} if gate else {}
    return item


def workload(*conditions: dict[str, str]) -> dict[str, Any]:
    return {"metadata": {"name": GROUP}, "status": {"conditions": list(conditions)}}


class QueueApi(FakeApi):
    """FakeApi whose Workload reads follow ``workloads`` (one per read, the last one repeated); when
    ``admit_at`` reads have been made, the pods lose their gate and are Ready."""

    def __init__(self, workloads: list[dict[str, Any] | None], admit_at: int | None = None) -> None:
        super().__init__([queued(0), queued(1)])
        self.workloads, self.admit_at, self.workload_reads = workloads, admit_at, 0

    def get_namespaced_custom_object(self, group: str, version: str, _ns: str, plural: str, name: str, **_: Any) -> Any:
        assert (group, version, plural, name) == ("kueue.x-k8s.io", "v1beta2", "workloads", GROUP)
        self.workload_reads += 1
        if self.admit_at is not None and self.workload_reads >= self.admit_at:
            self.pods = [queued(0, gate=False), queued(1, gate=False)]
        found = self.workloads[min(self.workload_reads, len(self.workloads)) - 1]
        if found is None:
            raise ApiException(status=404, reason="Not Found")
        return _Response(found)

    def list_namespaced_custom_object(self, group: str, version: str, _ns: str, plural: str, **_: Any) -> Any:
        return _Response({"items": []})


def _rollout(clock: FakeClock, said: list[str], queue_timeout: float | None) -> Rollout:
    return Rollout(
        "ns", "c-worker", 60, queue_timeout_seconds=queue_timeout, say=said.append, clock=clock, sleep=clock.sleep
    )


def test_up_says_each_new_state_of_the_queue_and_waits_past_its_own_timeout() -> None:
    pending = {"type": "QuotaReserved", "status": "False", "reason": "Pending", "message": SHORT}
    admitted = {"type": "Admitted", "status": "True", "reason": "Admitted", "message": ""}
    # read 1: no Workload yet; reads 2..: queued for quota; then admitted (pods Ready) after 100 s of fake time
    api = QueueApi([None, workload(pending)] + [workload(pending)] * 400 + [workload(admitted)], admit_at=403)
    clock, said = FakeClock(), []
    _rollout(clock, said, queue_timeout=3600).run(api, api, api)  # type: ignore[arg-type]
    assert clock.now > 60  # the rollout's own 60 s count from admission
    assert said == [
        "StatefulSet c-worker: queue team-a: waiting for Kueue to make the workload of its 3 pods (is Kueue running?)",
        f"StatefulSet c-worker: queue team-a: queued: {SHORT}",
        "StatefulSet c-worker: queue team-a: admitted, 3 pods",  # read while the pods were still gated
    ]


def test_a_queue_wait_that_runs_out_fails_naming_the_queue_and_kueues_reason() -> None:
    pending = {"type": "QuotaReserved", "status": "False", "reason": "Pending", "message": SHORT}
    api = QueueApi([workload(pending)])
    clock, said = FakeClock(), []
    with pytest.raises(RolloutError) as raised:
        _rollout(clock, said, queue_timeout=120).run(api, api, api)  # type: ignore[arg-type]
    assert 120 < clock.now < 130
    assert str(raised.value) == (
        "StatefulSet c-worker: 2 pods not admitted by Kueue after 120 s (kompi:queue team-a, "
        f"kompi:queueTimeoutSeconds): queued: {SHORT}"
    )


NEVER = (
    "couldn't assign flavors to pod set worker: insufficient quota for nvidia.com/gpu in flavor f, previously "
    "considered podsets requests (0) + current podset request (20) > maximum capacity (18)"
)


def test_a_request_over_what_the_queue_can_ever_hold_fails_at_once_with_kueues_words() -> None:
    pending = {"type": "QuotaReserved", "status": "False", "reason": "Pending", "message": NEVER}
    api = QueueApi([workload(pending)])
    clock, said = FakeClock(), []
    with pytest.raises(RolloutError) as raised:
        _rollout(clock, said, queue_timeout=3600).run(api, api, api)  # type: ignore[arg-type]
    assert clock.now < 5  # not the queue's 3600 s
    assert str(raised.value) == (
        "StatefulSet c-worker: Kueue will not admit its 2 pods (kompi:queue team-a): more than its queue can ever "
        "hold (ask for less: kompi:workers, kompi:gpusPerWorker, the pods' resources; or give its ClusterQueue more "
        f"quota): {NEVER}"
    )


def test_a_finished_workload_fails_at_once_and_one_flavor_that_may_free_up_keeps_waiting() -> None:
    finished = {"type": "Finished", "status": "True", "reason": "FailedToStart", "message": "node labels conflict"}
    api = QueueApi([workload(finished)])
    with pytest.raises(RolloutError) as raised:
        _rollout(FakeClock(), [], queue_timeout=3600).run(api, api, api)  # type: ignore[arg-type]
    # Kueue's reason and words, and the Workload's name, which the user deletes to start again
    assert str(raised.value) == (
        f"StatefulSet c-worker: Kueue will not start its 2 pods (kompi:queue team-a): its workload {GROUP} is "
        "Finished (FailedToStart): node labels conflict"
    )
    # one flavor can never hold it, another may once its quota is free: that is a wait, to the queue's timeout
    either = f"{NEVER}, insufficient unused quota for nvidia.com/gpu in flavor g, 4 more needed"
    pending = {"type": "QuotaReserved", "status": "False", "reason": "Pending", "message": either}
    api, clock = QueueApi([workload(pending)]), FakeClock()
    with pytest.raises(RolloutError, match="not admitted by Kueue after 120 s"):
        _rollout(clock, [], queue_timeout=120).run(api, api, api)  # type: ignore[arg-type]
    assert clock.now > 120


def test_a_workload_this_identity_may_not_read_is_said_so_not_taken_for_kueue_missing() -> None:
    class Forbidden(QueueApi):
        def get_namespaced_custom_object(self, *_: Any, **__: Any) -> Any:
            raise ApiException(status=403, reason="Forbidden")

    api, said = Forbidden([None]), []
    with pytest.raises(RolloutError, match="not admitted by Kueue after 60 s"):
        _rollout(FakeClock(), said, queue_timeout=60).run(api, api, api)  # type: ignore[arg-type]
    assert said == [
        "StatefulSet c-worker: queue team-a: its 3 pods wait for Kueue, which says why in their Workload, and this "
        "identity may not read Workloads here (403: grant get on workloads.kueue.x-k8s.io)"
    ]


def test_queue_states_carry_kueues_own_words() -> None:
    evicted = {"type": "Evicted", "status": "True", "reason": "Preempted", "message": "Preempted to accommodate w"}
    said_evicted = "queue q: evicted (Preempted): Preempted to accommodate w"
    assert queue_state("q", workload(evicted), 3) == said_evicted
    # Kueue stops the pods and gives the quota back with the eviction's own message, then its scheduler tries
    # the requeued workload again and says why it still waits (Evicted stays true until quota is reserved).
    released = {"type": "QuotaReserved", "status": "False", "reason": "Pending", "message": evicted["message"]}
    assert queue_state("q", workload(evicted, released), 3) == said_evicted
    retried = {**released, "message": "couldn't assign flavors to pod set main"}
    assert queue_state("q", workload(evicted, retried), 3) == (
        "queue q: queued: couldn't assign flavors to pod set main (after eviction: Preempted)"
    )
    reserved = {"type": "QuotaReserved", "status": "True", "reason": "QuotaReserved"}
    assert queue_state("q", workload(reserved), 3) == "queue q: quota reserved, waiting for admission checks"
    admitted = {"type": "Admitted", "status": "True"}
    assert queue_state("q", workload(reserved, admitted), 3) == "queue q: admitted, 3 pods"
    assert queue_state("q", workload(), 3) == "queue q: queued, not yet considered by Kueue"


class ResizeApi(FakeApi):
    """A resized cluster: the StatefulSet's template names a new pod group, its pods (of the old revision) the
    old one."""

    def __init__(self, owned: list[dict[str, Any]] | None = None) -> None:
        old = [queued(0, gate=False), queued(1, gate=False)]
        for item in old:
            item["metadata"]["labels"]["controller-revision-hash"] = "old"
        super().__init__(old, replacement=lambda ordinal: queued(ordinal, gate=False) | {"spec": {}})
        self.deleted_workloads: list[str] = []
        self.listed: list[dict[str, Any]] = owned or []  # the namespace's Workloads

    def read_namespaced_stateful_set(self, name: str, namespace: str, **kwargs: object) -> _Response:
        body = json.loads(super().read_namespaced_stateful_set(name, namespace, **kwargs).data)
        body["metadata"]["uid"] = STATEFULSET_UID
        body["spec"]["template"] = {"metadata": {"labels": {GROUP_LABEL: "c-new"}}}
        return _Response(body)

    def list_namespaced_custom_object(self, group: str, version: str, _ns: str, plural: str, **_: Any) -> Any:
        assert (group, version, plural) == ("kueue.x-k8s.io", "v1beta2", "workloads")
        return _Response({"items": self.listed})

    def delete_namespaced_custom_object(self, group: str, version: str, _ns: str, plural: str, name: str) -> Any:
        self.deleted_workloads.append(name)
        return _Response({})

    def get_namespaced_custom_object(self, group: str, version: str, _ns: str, plural: str, name: str, **_: Any) -> Any:
        assert name == "c-new"  # the new size's: Kueue has not made it (nothing to hold yet)
        raise ApiException(status=404, reason="Not Found")


def test_a_resize_deletes_the_old_groups_workload_and_keeps_the_new_one() -> None:
    api = ResizeApi()
    _rollout(FakeClock(), [], queue_timeout=3600).run(api, api, api)  # type: ignore[arg-type]
    assert api.deleted_workloads == [GROUP]  # the old group's, once for both pods


def test_pods_the_controller_is_deleting_already_still_name_their_group() -> None:
    api = ResizeApi()
    going = queued(0, gate=False)
    going["metadata"]["deletionTimestamp"] = "2026-12-06T00:00:00Z"
    statefulset = json.loads(api.read_namespaced_stateful_set("c-worker", "ns").data)
    workloads_of(api).release_old(statefulset, [going])
    assert api.deleted_workloads == [GROUP]


def workloads_of(api: FakeApi) -> StatefulSetWorkloads:
    clock = FakeClock()
    return StatefulSetWorkloads(api, "ns", "c-worker", JsonApi(60, clock, clock.sleep), print)  # type: ignore[arg-type]


def owned_by(name: str, uid: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "ownerReferences": [{"kind": "StatefulSet", "uid": uid}]}}


def test_a_resize_whose_old_pods_are_gone_deletes_the_old_workload_the_statefulset_owns() -> None:
    """The controller may have replaced every older pod before the rollout lists them (kwok's pods go at once):
    the old size's Workload is then found by its owner, this StatefulSet, and deleted; another's stays."""
    current = owned_by("c-new", STATEFULSET_UID)  # the current size's: kept
    api = ResizeApi(owned=[owned_by(GROUP, STATEFULSET_UID), owned_by("other", "not-ours"), current])
    statefulset = json.loads(api.read_namespaced_stateful_set("c-worker", "ns").data)
    workloads_of(api).release_old(statefulset, [])
    assert api.deleted_workloads == [GROUP]


def test_a_roll_that_keeps_the_group_deletes_no_workload() -> None:
    """An image or key change rolls pods of the old revision that already name the template's group: the
    admitted Workload is theirs and their replacements', and stays."""
    api = ResizeApi()
    same = queued(0, gate=False)
    same["metadata"]["labels"][GROUP_LABEL] = "c-new"
    statefulset = json.loads(api.read_namespaced_stateful_set("c-worker", "ns").data)
    workloads_of(api).release_old(statefulset, [same])
    assert api.deleted_workloads == []


class RollApi(FakeApi):
    """A key roll of an admitted queued cluster: old-revision pods of the template's own group, whose Workload
    Kueue made owned by the pods. Records the Workload patches and pod deletions in ``calls``, in order."""

    def __init__(self, patch_status: int | None = None) -> None:
        old = [queued(0, gate=False), queued(1, gate=False)]
        for item in old:
            item["metadata"]["labels"]["controller-revision-hash"] = "old"
        super().__init__(old, replacement=lambda ordinal: queued(ordinal, gate=False))
        owners = [
            {"apiVersion": "v1", "kind": "Pod", "name": p["metadata"]["name"], "uid": p["metadata"]["uid"]} for p in old
        ]
        self.workload: dict[str, Any] = {"metadata": {"name": GROUP, "ownerReferences": owners}}
        self.patch_status = patch_status
        self.calls: list[tuple[str, Any]] = []

    def read_namespaced_stateful_set(self, name: str, namespace: str, **kwargs: object) -> _Response:
        body = json.loads(super().read_namespaced_stateful_set(name, namespace, **kwargs).data)
        body["metadata"]["uid"] = STATEFULSET_UID
        body["spec"]["template"] = {"metadata": {"labels": {GROUP_LABEL: GROUP}}}
        return _Response(body)

    def get_namespaced_custom_object(self, group: str, version: str, _ns: str, plural: str, name: str, **_: Any) -> Any:
        assert (group, version, plural, name) == ("kueue.x-k8s.io", "v1beta2", "workloads", GROUP)
        return _Response(self.workload)

    def patch_namespaced_custom_object(
        self, group: str, version: str, _ns: str, plural: str, name: str, body: Any, _content_type: str, **_: Any
    ) -> Any:
        assert (group, version, plural, name) == ("kueue.x-k8s.io", "v1beta2", "workloads", GROUP)
        assert _content_type == "application/json-patch+json"
        self.calls.append(("patch", body))
        if self.patch_status is not None:
            raise ApiException(status=self.patch_status, reason="Forbidden")
        for op in body:  # the two "add" forms the rollout sends
            assert op["op"] == "add", op
            if op["path"].endswith("/-"):
                self.workload["metadata"]["ownerReferences"].append(op["value"])
            else:
                self.workload["metadata"]["ownerReferences"] = op["value"]
        return _Response(self.workload)

    def list_namespaced_custom_object(self, group: str, version: str, _ns: str, plural: str, **_: Any) -> Any:
        return _Response({"items": [self.workload]})

    def delete_namespaced_custom_object(self, *args: Any, **_: Any) -> Any:
        raise AssertionError(f"the current group's Workload deleted: {args}")

    def delete_namespaced_pod(self, name: str, namespace: str, body: Any, **kwargs: object) -> _Response:
        self.calls.append(("delete", name))
        return super().delete_namespaced_pod(name, namespace, body, **kwargs)


def test_a_roll_makes_the_statefulset_an_owner_of_the_workload_before_any_pod_goes() -> None:
    """Kueue makes only the pods owners of their group's Workload: with every pod deleted at once, the garbage
    collector could delete the Workload before Kueue adds the replacements, and the cluster queue again."""
    api = RollApi()
    _rollout(FakeClock(), [], queue_timeout=None).run(api, api, api)  # type: ignore[arg-type]
    kinds = [call[0] for call in api.calls]
    assert kinds == ["patch", "delete", "delete"], api.calls  # once: the second hold finds it owned already
    owners = api.workload["metadata"]["ownerReferences"]
    assert [owner["kind"] for owner in owners] == ["Pod", "Pod", "StatefulSet"]  # Kueue's pod owners are kept
    assert owners[2] == {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "name": "c-worker",
        "uid": STATEFULSET_UID,
        "blockOwnerDeletion": False,
    }


def test_a_workload_without_owners_gets_a_list_of_one() -> None:
    api = RollApi()
    del api.workload["metadata"]["ownerReferences"]
    _rollout(FakeClock(), [], queue_timeout=None).run(api, api, api)  # type: ignore[arg-type]
    assert [owner["uid"] for owner in api.workload["metadata"]["ownerReferences"]] == [STATEFULSET_UID]


def test_a_roll_that_may_not_patch_the_workload_says_so_and_goes_on() -> None:
    api, said = RollApi(patch_status=403), []
    _rollout(FakeClock(), said, queue_timeout=None).run(api, api, api)  # type: ignore[arg-type]
    assert [call[0] for call in api.calls] == ["patch", "delete", "delete", "patch"]  # tried again once Ready
    assert said[0] == (
        f"StatefulSet c-worker: may not patch Kueue Workload {GROUP} (403): a roll that replaces all pods at once "
        "may queue the cluster again under a new Workload"
    )


def test_a_resize_that_may_not_list_workloads_says_so_and_deletes_what_its_pods_name() -> None:
    api, said = ResizeApi(), []

    def forbidden(*_: Any, **__: Any) -> Any:
        raise ApiException(status=403, reason="Forbidden")

    api.list_namespaced_custom_object = forbidden  # type: ignore[method-assign]
    _rollout(FakeClock(), said, queue_timeout=3600).run(api, api, api)  # type: ignore[arg-type]
    assert api.deleted_workloads == [GROUP]
    assert said == [
        "StatefulSet c-worker: may not list Kueue Workloads (403): a Workload of an older size that its pods no "
        "longer name stays until the StatefulSet is deleted"
    ]


class PlatformApi(QueueApi):
    """Kueue as a platform set it: a one-shot run's Job as Kueue's Job webhook left it (``job``), and the pod
    group's members that exist (``group``, listed by the group's label)."""

    def __init__(self, workloads: list[dict[str, Any] | None], job: dict[str, Any], members: int = 3) -> None:
        super().__init__(workloads)
        self.job, self.group = job, [queued(ordinal) for ordinal in range(members)]
        self.deleted_workloads: list[str] = []

    def read_namespaced_job(self, name: str, namespace: str, **_: Any) -> Any:
        assert (name, namespace) == ("c-master", "ns")
        return _Response(self.job)

    def list_namespaced_pod(self, namespace: str, label_selector: str, **kwargs: object) -> _Response:
        if label_selector == f"{GROUP_LABEL}={GROUP}":
            return _Response({"items": self.group})
        return super().list_namespaced_pod(namespace, label_selector, **kwargs)

    def delete_namespaced_custom_object(self, group: str, version: str, _ns: str, plural: str, name: str) -> Any:
        self.deleted_workloads.append(name)
        return _Response({})


def one_shot_job(labels: dict[str, str] | None = None, suspend: bool = False) -> dict[str, Any]:
    return {"metadata": {"name": "c-master", "namespace": "ns", "labels": labels or {}}, "spec": {"suspend": suspend}}


def _one_shot(clock: FakeClock, said: list[str], new_run: bool = False) -> Rollout:
    return Rollout(
        "ns",
        "c-worker",
        60,
        queue_timeout_seconds=3600,
        give_up_seconds=30,
        launcher_job="c-master",
        new_run=new_run,
        say=said.append,
        clock=clock,
        sleep=clock.sleep,
    )


def test_a_one_shot_job_that_kueues_job_integration_took_fails_up_at_once_naming_the_setting() -> None:
    """Suspended by Kueue's Job webhook (manageJobsWithoutQueueName), the Job makes no pod until Kueue admits it
    alone: the pod group never forms, and `up` waited out kompi:queueTimeoutSeconds saying 'is Kueue running?'."""
    api, clock = PlatformApi([None], one_shot_job(suspend=True), members=2), FakeClock()
    with pytest.raises(RolloutError) as raised:
        _one_shot(clock, []).run(api, api, api, api)  # type: ignore[arg-type]
    assert clock.now < 5
    assert str(raised.value) == (
        "StatefulSet c-worker: Kueue's Job integration took one-shot Job ns/c-master and holds its pod back until it "
        "admits the Job alone, so the pod group of 3 never forms: Kueue's manageJobsWithoutQueueName, which takes "
        "every Job that names no queue (a platform setting in Kueue's Configuration: turn it off)"
    )
    # a LocalQueue "default" in the namespace: Kueue's webhook gave the Job its name
    api = PlatformApi([None], one_shot_job({QUEUE_LABEL: "default"}, suspend=True), members=2)
    with pytest.raises(
        RolloutError, match=r'took one-shot Job ns/c-master .*: the LocalQueue "default" in namespace ns'
    ):
        _one_shot(FakeClock(), []).run(api, api, api, api)  # type: ignore[arg-type]


def test_a_one_shot_job_left_to_the_pod_group_is_waited_for() -> None:
    admitted = {"type": "Admitted", "status": "True", "reason": "Admitted", "message": ""}
    api = PlatformApi([None, workload(admitted)], one_shot_job())
    api.admit_at = 3
    said: list[str] = []
    _one_shot(FakeClock(), said).run(api, api, api, api)  # type: ignore[arg-type]
    assert said[-1] == "StatefulSet c-worker: queue team-a: admitted, 3 pods"


def test_a_group_whose_members_all_wait_with_no_workload_fails_at_the_stuck_pod_timeout_naming_the_namespace() -> None:
    """Kueue's webhook gates the pods of a namespace outside managedJobsNamespaceSelector, and its controller skips
    them (ManagedJobsNamespaceSelectorAlwaysRespected): gated for good, where `up` waited out the queue's timeout."""
    api, clock = PlatformApi([None], one_shot_job()), FakeClock()
    with pytest.raises(RolloutError) as raised:
        _one_shot(clock, []).run(api, api, api, api)  # type: ignore[arg-type]
    assert 30 <= clock.now < 40  # the stuck-pod timeout, not the queue's 3600 s
    message = str(raised.value)
    assert message.startswith(
        f"StatefulSet c-worker: Kueue made no workload for pod group {GROUP} in 30 s (kompi:stuckPodTimeoutSeconds) "
        "although all its 3 pods exist and wait at its gate: namespace ns is outside Kueue's "
        "managedJobsNamespaceSelector"
    ), message
    # one member missing (a StatefulSet that cannot make its pod, say): a wait, to the queue's timeout
    api, clock = PlatformApi([None], one_shot_job(), members=2), FakeClock()
    with pytest.raises(RolloutError, match="not admitted by Kueue after 120 s"):
        Rollout("ns", "c-worker", 60, 120, give_up_seconds=30, clock=clock, sleep=clock.sleep).run(
            api,  # type: ignore[arg-type]
            api,  # type: ignore[arg-type]
            api,  # type: ignore[arg-type]
        )


def test_a_new_run_of_the_same_pods_deletes_the_workload_the_last_run_left_finished() -> None:
    """`pulumi up --replace` of an unchanged one-shot Job: the same pod group, whose Workload the last run left
    Finished (Succeeded), which Kueue admits no new pod into."""
    done = {"type": "Finished", "status": "True", "reason": "Succeeded", "message": "succeeded"}
    admitted = {"type": "Admitted", "status": "True", "reason": "Admitted", "message": ""}

    class Rerun(PlatformApi):
        def read_namespaced_stateful_set(self, name: str, namespace: str, **kwargs: object) -> _Response:
            body = json.loads(super().read_namespaced_stateful_set(name, namespace, **kwargs).data)
            body["spec"]["template"] = {"metadata": {"labels": {GROUP_LABEL: GROUP}}}
            body["metadata"]["uid"] = STATEFULSET_UID
            return _Response(body)

        def patch_namespaced_custom_object(self, *_: Any, **__: Any) -> Any:
            return _Response({})

    api, said = Rerun([workload(done), None, workload(admitted)], one_shot_job()), []
    api.admit_at = 3
    _one_shot(FakeClock(), said, new_run=True).run(api, api, api, api)  # type: ignore[arg-type]
    assert api.deleted_workloads == [GROUP]
    assert said[0] == f"StatefulSet c-worker: a new run: deleted the Workload {GROUP} that the last run left Finished"
    # the same Finished Workload on a roll that is no new run: Kueue will not start the pods, as before
    api = Rerun([workload(done)], one_shot_job())
    with pytest.raises(RolloutError, match="Kueue will not start its 2 pods"):
        _one_shot(FakeClock(), []).run(api, api, api, api)  # type: ignore[arg-type]
    assert api.deleted_workloads == []
