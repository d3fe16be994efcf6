"""kompi:oneWorkerPerNode: a required anti-affinity among the cluster's own workers, per node, kept beside the
user's own affinity; the master is left free."""

from __future__ import annotations

import json
from typing import Any

from kompi_components.render import render_objects

REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
USERS = {"labelSelector": {"matchLabels": {"app": "other"}}, "topologyKey": "topology.kubernetes.io/zone"}


def _statefulsets(config: dict[str, str]) -> dict[str, Any]:
    objects = render_objects({"kompi:clusterName": "c", **config})
    return {m["metadata"]["name"]: m for m in objects if m["kind"] == "StatefulSet"}


def _affinity(statefulset: dict[str, Any]) -> dict[str, Any]:
    return dict(statefulset["spec"]["template"]["spec"].get("affinity", {}))


def test_one_worker_per_node_adds_the_anti_affinity_of_the_workers_only() -> None:
    assert [_affinity(s) for s in _statefulsets({}).values()] == [{}, {}]
    spread = _statefulsets({"kompi:oneWorkerPerNode": "true"})
    selector = spread["c-worker"]["spec"]["selector"]["matchLabels"]
    term = {"labelSelector": {"matchLabels": selector}, "topologyKey": "kubernetes.io/hostname"}
    assert _affinity(spread["c-worker"]) == {"podAntiAffinity": {REQUIRED: [term]}}
    assert _affinity(spread["c-master"]) == {}


def test_the_users_own_affinity_is_kept_beside_it() -> None:
    users = {"affinity": {"podAntiAffinity": {REQUIRED: [USERS]}, "nodeAffinity": {"x": 1}}}
    config = {"kompi:oneWorkerPerNode": "true", "kompi:workerPod": json.dumps(users)}
    worker = _affinity(_statefulsets(config)["c-worker"])
    assert worker["nodeAffinity"] == {"x": 1}
    first, ours = worker["podAntiAffinity"][REQUIRED]
    assert first == USERS and ours["topologyKey"] == "kubernetes.io/hostname"
