"""`pulumi up` under mocks: the Job comes before master and workers, reruns only when its spec changes,
retained claims get retainOnDelete, and the render still matches what `up` registers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi
import pytest

from kompi_components.render import render_objects
from tests.data.configs import EVERY_FEATURE_WITH_DATA, SMALL, with_preparation
from tests.program.parity import by_identity
from tests.pulumi_mocks import RecordingMocks, RecordingMonitor, Registration, registered_manifests, run_program
from tests.stacks import as_config

JOB = "kubernetes:batch/v1:Job"
CLAIM = "kubernetes:core/v1:PersistentVolumeClaim"
STATEFULSET = "kubernetes:apps/v1:StatefulSet"
# SMALL without the retained claim, in a namespace that kompi creates.
IN_OWN_NAMESPACE: dict[str, Any] = SMALL | {
    "createNamespace": True,
    "dataVolumes": SMALL["dataVolumes"][:1],
}


class RetentionMonitor(RecordingMonitor):
    """Also records the retainOnDelete option of each registration (unset when never asked for)."""

    def __init__(self, mocks: RecordingMocks) -> None:
        super().__init__(mocks)
        self.retain_on_delete: dict[str, bool | None] = {}

    def RegisterResource(self, request: Any) -> Any:
        response = super().RegisterResource(request)
        has = request.HasField("retainOnDelete")
        self.retain_on_delete[request.name] = request.retainOnDelete if has else None
        return response


@dataclass
class FailingJobMocks(RecordingMocks):
    """The Job's creation fails, as pulumi-kubernetes reports a Job whose Failed condition is True."""

    attempted: list[str] = field(default_factory=list)

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        self.attempted.append(args.typ)
        if args.typ == JOB:
            raise RuntimeError("Job failed: BackoffLimitExceeded (Job has reached the specified backoff limit)")
        return super().new_resource(args)


def _run(values: dict[str, Any], mocks: RecordingMocks | None = None) -> RecordingMocks:
    return run_program(as_config(values), mocks)


def _short(urns: list[str]) -> set[str]:
    return {urn.split("::")[-1] for urn in urns}


def _jobs(mocks: RecordingMocks) -> list[Registration]:
    return mocks.of_type(JOB)


@pytest.mark.parametrize("statefulset", ["small-statefulset-small-master", "small-statefulset-small-worker"])
def test_master_and_workers_depend_on_the_job_and_the_claims(statefulset: str) -> None:
    mocks = _run(IN_OWN_NAMESPACE)
    (job,) = _jobs(mocks)
    dependencies = _short(mocks.named(STATEFULSET, statefulset).dependencies)
    assert {
        job.name,
        "small-persistentvolumeclaim-small-data-train",
        "small-namespace-kompi",
        "small-secret-small-ssh",
    } <= dependencies


def test_the_job_depends_on_the_namespace_and_the_claims_it_writes() -> None:
    mocks = _run(IN_OWN_NAMESPACE)
    (job,) = _jobs(mocks)
    # (the data guard refuses a change that would delete the claim, before anything touches it)
    guard = "small-data-guard"
    assert _short(job.dependencies) == {"small-namespace-kompi", "small-persistentvolumeclaim-small-data-train", guard}
    claim = mocks.named(CLAIM, "small-persistentvolumeclaim-small-data-train")
    assert _short(claim.dependencies) == {"small-namespace-kompi", guard}


def test_claims_and_job_have_their_own_components() -> None:
    mocks = _run(IN_OWN_NAMESPACE)
    urns = {r.urn: r for r in mocks.registrations}
    (job,) = _jobs(mocks)
    assert urns[job.parent].type_ == "kompi:index:DataPreparation"
    claim = mocks.named(CLAIM, "small-persistentvolumeclaim-small-data-train")
    assert urns[claim.parent].type_ == "kompi:index:Data"


def test_a_failed_job_stops_up_before_any_mpi_pod_is_registered() -> None:
    mocks = FailingJobMocks()
    with pytest.raises(Exception, match="BackoffLimitExceeded"):
        _run(IN_OWN_NAMESPACE, mocks)
    assert JOB in mocks.attempted
    assert STATEFULSET not in mocks.attempted


def test_without_preparation_the_pods_still_wait_for_the_claims() -> None:
    mocks = _run({"dataVolumes": [{"name": "scratch", "size": "1Gi", "mountPath": "/shared"}]})
    assert not _jobs(mocks)
    worker = mocks.named(STATEFULSET, "kompi-statefulset-kompi-worker")
    assert "kompi-persistentvolumeclaim-kompi-data-scratch" in _short(worker.dependencies)


def test_retain_on_delete_is_set_for_retained_claims_only() -> None:
    mocks = RecordingMocks()
    monitor = RetentionMonitor(mocks)
    pulumi.runtime.set_mocks(mocks, project="kompi", stack="test", preview=False, monitor=monitor)

    @pulumi.runtime.test
    def body() -> None:
        from kompi_components import program

        pulumi.runtime.set_all_config(as_config(SMALL))
        program.run()

    body()
    retained = {name for name, value in monitor.retain_on_delete.items() if value}
    assert retained == {"small-persistentvolumeclaim-small-data-keep"}
    assert monitor.retain_on_delete["small-persistentvolumeclaim-small-data-train"] is None


def test_same_config_and_state_register_the_same_job_so_nothing_reruns() -> None:
    first = _jobs(_run(SMALL, RecordingMocks(state_seed="kept")))
    second = _jobs(_run(SMALL, RecordingMocks(state_seed="kept")))
    assert [(j.name, j.inputs) for j in first] == [(j.name, j.inputs) for j in second]


@pytest.mark.parametrize(
    "changed",
    [
        with_preparation(command=["python3", "/repo/prepare.py", "--shards", "8"]),
        with_preparation(image="registry.example.com/prep:2"),
    ],
    ids=["command", "image"],
)
def test_changed_command_or_image_registers_a_job_under_a_new_name(changed: dict[str, Any]) -> None:
    (before,) = _jobs(_run(SMALL))
    (after,) = _jobs(_run(changed))
    # A new logical name: Pulumi creates the new Job (and waits for it) and deletes the old one.
    assert after.name != before.name
    assert after.inputs["metadata"]["name"] != before.inputs["metadata"]["name"]


@pytest.mark.parametrize(
    "values", [SMALL, EVERY_FEATURE_WITH_DATA, IN_OWN_NAMESPACE], ids=["small", "every-feature", "own-namespace"]
)
def test_render_and_pulumi_up_build_the_same_objects(values: dict[str, Any]) -> None:
    config = as_config(values)
    rendered = by_identity(render_objects(config))
    registered = by_identity(registered_manifests(run_program(config)))
    assert sorted(registered) == sorted(rendered)
    assert {"Job", "PersistentVolumeClaim"} <= {kind for kind, _ in rendered}
    for identity, manifest in rendered.items():
        assert registered[identity] == manifest, identity


def test_claims_survive_a_new_preparation_and_other_changes() -> None:
    def claims(values: dict[str, Any]) -> dict[str, dict[str, Any]]:
        return {r.name: r.inputs for r in _run(values).of_type(CLAIM)}

    before = claims(SMALL)
    for changed in (with_preparation(command=["python3", "/repo/other.py"]), SMALL | {"workers": 5}):
        assert claims(changed) == before
