"""kompi:queue: every pod of the cluster is one Kueue pod group, admitted all or nothing."""

from __future__ import annotations

from typing import Any

import pytest

from kompi_components import contract
from kompi_components.manifests import queue
from kompi_components.render import render_objects
from tests.stacks import as_config

QUEUED = {"clusterName": "q", "workers": 3, "gpusPerWorker": 2, "queue": "team-a"}


def _templates(values: dict[str, object]) -> dict[str, dict[str, Any]]:
    """The pod template metadata of each pod owner, by its kind and name."""
    objects = render_objects(as_config(values))
    return {
        f"{item['kind']}/{item['metadata']['name']}": item["spec"]["template"]["metadata"]
        for item in objects
        if item["kind"] in ("StatefulSet", "Job")
    }


def test_master_and_workers_are_one_group_of_every_member() -> None:
    templates = _templates(QUEUED)
    master, workers = templates["StatefulSet/q-master"], templates["StatefulSet/q-worker"]
    group = master["labels"][queue.GROUP_LABEL]
    assert workers["labels"][queue.GROUP_LABEL] == group
    for template, role in ((master, "master"), (workers, "worker")):
        assert template["labels"][queue.QUEUE_LABEL] == "team-a"
        assert template["annotations"][queue.TOTAL_COUNT_ANNOTATION] == "4"
        assert template["annotations"][queue.ROLE_ANNOTATION] == role
        assert template["annotations"][queue.SERVING_ANNOTATION] == "true"
        # kompi is the pods' suspending parent: Kueue puts no finalizer on them (a deleted pod goes and its
        # StatefulSet makes it again) and leaves the managed label, without which it skips them, to kompi.
        assert template["annotations"][queue.PARENT_ANNOTATION] == queue.PARENT != "statefulset"
        assert template["labels"][queue.MANAGED_LABEL] == "true"
    assert queue.PRIORITY_LABEL not in master["labels"]


def test_the_owners_carry_no_queue_label() -> None:
    # A queue label on a StatefulSet or Job would hand it to Kueue's own integration for that kind,
    # which admits each owner alone and overwrites the group label.
    objects = render_objects(as_config(QUEUED | {"oneShot": {"enabled": True, "command": "mpiexec true"}}))
    owners = [item for item in objects if item["kind"] in ("StatefulSet", "Job")]
    assert {item["kind"] for item in owners} == {"StatefulSet", "Job"}
    for item in owners:
        assert not any(key.startswith("kueue.x-k8s.io/") for key in item["metadata"]["labels"])


def test_the_one_shot_master_joins_the_workers_group() -> None:
    templates = _templates(QUEUED | {"oneShot": {"enabled": True, "command": "mpiexec true"}})
    job, workers = templates["Job/q-master"], templates["StatefulSet/q-worker"]
    assert job["labels"][queue.GROUP_LABEL] == workers["labels"][queue.GROUP_LABEL]
    assert job["annotations"][queue.TOTAL_COUNT_ANNOTATION] == "4"
    assert job["annotations"][queue.PARENT_ANNOTATION] == queue.PARENT
    # A one-shot run ends: no member is serving, and the group is Finished once none of its pods runs, which the
    # launcher alone says (a preempted group whose workers stopped first must not end).
    for template in (job, workers):
        assert queue.SERVING_ANNOTATION not in template["annotations"]
    assert job["annotations"][queue.RETRIABLE_ANNOTATION] == "false"
    assert queue.RETRIABLE_ANNOTATION not in workers["annotations"]


def test_a_resize_is_a_new_group_an_image_change_is_not() -> None:
    def group(values: dict[str, object]) -> str:
        return str(_templates(QUEUED | values)["StatefulSet/q-worker"]["labels"][queue.GROUP_LABEL])

    same = group({})
    assert group({"imageTag": "other"}) == same
    assert group({"sshKeyVersion": 2}) == same
    assert len({same, group({"workers": 4}), group({"gpusPerWorker": 4}), group({"queue": "team-b"})}) == 4
    assert group({"workerPod": {"resources": {"requests": {"cpu": "2"}}}}) != same


def test_a_placement_change_is_a_new_group() -> None:
    """Kueue admits each pod set to a flavor by its nodeSelector, required node affinity and tolerations (and
    Kueue's topology annotations), and only merges the admitted flavor's node labels into a replaced pod: kept
    in its old group, a cluster moved to other nodes stays on the old flavor (a conflicting nodeSelector ends its
    Workload Finished, FailedToStart, with every pod gated). Each move is a group, so a Workload, of its own."""

    def group(values: dict[str, object]) -> str:
        return str(_templates(QUEUED | values)["StatefulSet/q-master"]["labels"][queue.GROUP_LABEL])

    h100 = {"key": "gpu-type", "operator": "In", "values": ["h100"]}
    required = "requiredDuringSchedulingIgnoredDuringExecution"
    moves = [
        {"workerPod": {"nodeSelector": {"gpu-type": "h100"}}},
        {"workerPod": {"nodeSelector": {"gpu-type": "a100"}}},
        {"workerPod": {"tolerations": [{"key": "h100", "operator": "Exists", "effect": "NoSchedule"}]}},
        {
            "workerPod": {
                "affinity": {"nodeAffinity": {required: {"nodeSelectorTerms": [{"matchExpressions": [h100]}]}}}
            }
        },
        {"masterPod": {"nodeSelector": {"gpu-type": "h100"}}},
        {"masterPod": {"tolerations": [{"key": "h100", "operator": "Exists", "effect": "NoSchedule"}]}},
        {"oneWorkerPerNode": True},
        # its init container's requests count in each pod's
        {"appCode": [{"name": "app", "repo": "https://git.example.com/app.git", "mountPath": "/app"}]},
        {"workerPod": {"annotations": {"kueue.x-k8s.io/podset-required-topology": "cloud.example.com/rack"}}},
    ]
    same = group({})
    assert len({same, *(group(values) for values in moves)}) == len(moves) + 1
    # what Kueue does not admit on keeps the workload (the pods roll in it)
    assert group({"workerPod": {"annotations": {"example.com/team": "a"}}}) == same
    assert group({"masterPod": {"volumes": [{"name": "x", "emptyDir": {}}]}}) == same


def test_a_kompi_upgrade_that_leaves_the_pods_as_they_are_keeps_a_one_shot_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """The run's group follows what its pods are made of, not the objects' kompi version label: an upgrade that
    renders the same pods neither replaces the Job nor reruns its command."""
    one_shot = QUEUED | {"imageTag": "pinned", "oneShot": {"enabled": True, "command": "mpiexec true"}}
    before = _templates(one_shot)["Job/q-master"]["labels"][queue.GROUP_LABEL]
    monkeypatch.setattr(contract, "KOMPI_VERSION", "9.9.9")
    objects = render_objects(as_config(one_shot))
    assert {item["metadata"]["labels"]["app.kubernetes.io/version"] for item in objects} >= {"9.9.9"}
    assert _templates(one_shot)["Job/q-master"]["labels"][queue.GROUP_LABEL] == before


def test_each_one_shot_run_is_a_group_of_its_own() -> None:
    """A run's Workload is Finished once it succeeded, and Kueue admits no new pod into a Finished group: a
    new run (any change of the Job or the workers) is a new group, in both pod templates."""
    one_shot = {"enabled": True, "command": "mpiexec true"}

    def groups(values: dict[str, object]) -> set[str]:
        templates = _templates(QUEUED | {"oneShot": one_shot} | values)
        return {str(templates[key]["labels"][queue.GROUP_LABEL]) for key in ("Job/q-master", "StatefulSet/q-worker")}

    [run] = groups({})
    assert groups({}) == {run}  # the same run renders the same group
    changed = [
        {"oneShot": one_shot | {"command": "mpiexec hostname"}},
        {"imageTag": "other"},
        {"sshKeyVersion": 2},
        {"workerPod": {"nodeSelector": {"pool": "b"}}},
        {"masterPod": {"nodeSelector": {"pool": "b"}}},
    ]
    new = [groups(values) for values in changed]
    assert all(len(group) == 1 for group in new), new  # the Job's pod and the workers stay one group
    assert len({run, *(group.pop() for group in new)}) == len(changed) + 1


def test_priority_class_is_on_every_member() -> None:
    templates = _templates(QUEUED | {"queuePriorityClass": "urgent"})
    for template in templates.values():
        assert template["labels"][queue.PRIORITY_LABEL] == "urgent"


def test_data_preparation_is_queued_alone() -> None:
    values = QUEUED | {
        "dataVolumes": [{"name": "d", "size": "1Gi", "mountPath": "/data"}],
        "dataPreparation": {"command": ["true"]},
    }
    [prepare] = [template for key, template in _templates(values).items() if "-prepare-" in key]
    assert prepare["labels"][queue.QUEUE_LABEL] == "team-a"
    assert queue.GROUP_LABEL not in prepare["labels"]


def test_without_a_queue_no_pod_mentions_kueue() -> None:
    for template in _templates(QUEUED | {"queue": None}).values():
        keys = [*template["labels"], *template.get("annotations", {})]
        assert not any(key.startswith("kueue.x-k8s.io/") for key in keys)
