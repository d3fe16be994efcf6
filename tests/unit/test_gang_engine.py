"""The gang scheduler's build inputs and local configuration (no build, no cluster)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kompi_engine import versions
from kompi_engine.build import gang_scheduler
from kompi_engine.cluster import gang
from kompi_engine.cluster.local import CLIENT_RATE, STAND_IN_SCHEDULERS
from kompi_engine.cluster.pki import CLIENTS
from kompi_engine.operation.gang_watch import NO_SCHEDULER_AFTER, gang_state

UPSTREAM = """module sigs.k8s.io/scheduler-plugins

go 1.24.0

require (
\tk8s.io/api v0.33.5
\tk8s.io/kubernetes v1.33.5
)

replace (
\tk8s.io/api => k8s.io/api v0.33.5
\tk8s.io/kubernetes => k8s.io/kubernetes v1.33.5
)

replace k8s.io/externaljwt => k8s.io/externaljwt v0.33.5
"""


def test_wrapper_module_repeats_every_published_replace() -> None:
    go_mod = gang_scheduler.wrapper_go_mod(UPSTREAM)
    assert "go 1.24.0" in go_mod
    assert f"require sigs.k8s.io/scheduler-plugins v{versions.SCHEDULER_PLUGINS}" in go_mod
    for line in (
        "k8s.io/api => k8s.io/api v0.33.5",
        "k8s.io/kubernetes => k8s.io/kubernetes v1.33.5",
        "k8s.io/externaljwt => k8s.io/externaljwt v0.33.5",
    ):
        assert line in go_mod


def test_coscheduling_is_the_only_queue_sort_of_its_own_profile() -> None:
    config = gang.scheduler_config(Path("/k"), CLIENT_RATE)
    [profile] = config["profiles"]
    assert profile["schedulerName"] == "scheduler-plugins-scheduler"
    plugins = profile["plugins"]
    assert plugins["queueSort"] == {"enabled": [{"name": "Coscheduling"}], "disabled": [{"name": "*"}]}
    assert plugins["multiPoint"] == {"enabled": [{"name": "Coscheduling"}]}
    assert "scheduler-plugins-scheduler" not in STAND_IN_SCHEDULERS


def test_gang_scheduler_users_have_certificates_and_no_master_rights() -> None:
    users = {client.common_name: client for client in CLIENTS}
    for user in (gang.SCHEDULER_USER, gang.CONTROLLER_USER):
        assert users[user].groups == ()
    bindings = [m for m in gang.rbac_manifests() if m["kind"].endswith("Binding")]
    granted = {(b["subjects"][0]["name"], b["roleRef"]["name"]) for b in bindings}
    assert (gang.SCHEDULER_USER, "system:kube-scheduler") in granted
    assert (gang.SCHEDULER_USER, gang.SCHEDULER_USER) in granted
    assert (gang.CONTROLLER_USER, gang.CONTROLLER_USER) in granted


def _pod(node: str | None = None, condition: dict[str, str] | None = None) -> dict[str, Any]:
    return {"spec": {"nodeName": node} if node else {}, "status": {"conditions": [condition] if condition else []}}


def test_gang_watch_says_the_schedulers_reason_or_that_none_answers() -> None:
    gap = {"type": "PodScheduled", "status": "False", "message": "resource gap: nvidia.com/gpu"}
    line = gang_state([_pod(condition=gap), _pod(condition=gap), _pod("n")], "s", 0)
    assert line == "2 of 3 gang pods not placed by s: resource gap: nvidia.com/gpu"
    assert gang_state([_pod("n"), _pod("m")], "s", 0) is None
    assert gang_state([_pod(), _pod()], "kube-batch", 0) is None  # too early to blame the scheduler
    silent = gang_state([_pod(), _pod()], "kube-batch", NO_SCHEDULER_AFTER)
    assert silent is not None and "scheduler named kube-batch and none has answered" in silent
