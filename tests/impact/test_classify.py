"""The change classifier on small, exact objects: each rule, and the worst change winning."""

from __future__ import annotations

import copy

from kompi_components.impact import Impact, ObjectChange, compare, impact_of
from kompi_components.manifests.meta import RETAIN_ON_DELETE, ObjectOptions, PlannedObject


def _statefulset(**spec: object) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "c-worker", "namespace": "ns", "labels": {"v": "1"}},
        "spec": {"replicas": 2, "serviceName": "c", "template": {"spec": {"containers": [{"image": "a"}]}}, **spec},
    }


CLAIMS = {
    "volumeClaimTemplates": [{"metadata": {"name": "scratch"}, "spec": {"accessModes": ["ReadWriteOnce"]}}],
    "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete", "whenScaled": "Retain"},
}


def _claim(name: str = "c-data", retain: bool = False, annotated: bool = False) -> PlannedObject:
    meta: dict = {"name": name, "namespace": "ns"}
    if annotated:
        meta["annotations"] = {RETAIN_ON_DELETE: "true"}
    manifest = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": {"accessModes": ["RWX"]}}
    return PlannedObject(manifest, ObjectOptions(retain_on_delete=retain))


def _compare(before: list[dict | PlannedObject], after: list[dict | PlannedObject]) -> list[ObjectChange]:
    """compare() of objects; a bare manifest has Pulumi's default options."""

    def objects(items: list[dict | PlannedObject]) -> list[PlannedObject]:
        return [item if isinstance(item, PlannedObject) else PlannedObject(item) for item in items]

    return compare(objects(before), objects(after))


def _changed(before: dict, path: list[str], value: object) -> dict:
    after = copy.deepcopy(before)
    target = after
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return after


def test_identical_renders_change_nothing() -> None:
    assert _compare([_statefulset()], [_statefulset()]) == []
    assert impact_of([]) is Impact.NOTHING


def test_labels_and_replicas_update_in_place() -> None:
    before = _statefulset()
    changes = _compare([before], [_changed(_changed(before, ["spec", "replicas"], 3), ["metadata", "labels"], {})])
    assert impact_of(changes) is Impact.IN_PLACE
    assert "metadata.labels" in changes[0].why and "spec.replicas" in changes[0].why


def test_a_new_pod_template_rolls_the_pods() -> None:
    before = _statefulset(**CLAIMS)
    after = _changed(before, ["spec", "template"], {"spec": {"containers": [{"image": "b"}]}})
    assert impact_of(_compare([before], [after])) is Impact.ROLLS_PODS


def test_an_immutable_field_replaces_and_takes_the_claims_along() -> None:
    without_claims = _statefulset()
    assert impact_of(_compare([without_claims], [_changed(without_claims, ["spec", "serviceName"], "d")])) is (
        Impact.REPLACES
    )
    with_claims = _statefulset(**CLAIMS)
    labelled = copy.deepcopy(with_claims)
    labelled["spec"]["volumeClaimTemplates"][0]["metadata"]["labels"] = {"version": "2"}
    (change,) = _compare([with_claims], [labelled])
    assert change.impact is Impact.DELETES_DATA
    assert "spec.volumeClaimTemplates" in change.why
    # Claims the StatefulSet keeps when it goes (whenDeleted: Retain) survive a replacement.
    retained = _changed(with_claims, ["spec", "persistentVolumeClaimRetentionPolicy"], {"whenDeleted": "Retain"})
    relabelled = _changed(labelled, ["spec", "persistentVolumeClaimRetentionPolicy"], {"whenDeleted": "Retain"})
    assert impact_of(_compare([retained], [relabelled])) is Impact.REPLACES


def test_a_renamed_claim_is_a_deleted_claim_unless_retained() -> None:
    changes = _compare([_claim()], [_claim("c-data2")])
    assert [(c.name, c.impact) for c in changes] == [("c-data", Impact.DELETES_DATA), ("c-data2", Impact.IN_PLACE)]
    assert impact_of(_compare([_claim(retain=True)], [_claim("c-data2", retain=True)])) is Impact.IN_PLACE
    # the option retains it; the annotation only shows it to kubectl users
    assert impact_of(_compare([_claim(annotated=True)], [_claim("c-data2")])) is Impact.DELETES_DATA


def test_a_deleted_job_takes_its_pods_along() -> None:
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "namespace": "ns"}, "spec": {}}
    (change,) = _compare([job], [])
    assert change.impact is Impact.REPLACES
