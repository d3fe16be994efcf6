"""docs/changes.md: one example change of every config key, and what it does to a running cluster.

Each example starts from ``BASE`` (every feature on, so that each key has objects to act on), or from
BASE with a few keys set first, and changes one key. ``bin/kompi change-table`` prints the table; a
test keeps the docs in step and checks that every key of the schema has an example.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from unittest import mock

from kompi_components import contract
from kompi_components.impact.classify import Impact, ObjectChange, compare, impact_of
from kompi_components.manifests.meta import PlannedObject
from kompi_components.render import planned_objects

START = "<!-- change-table:start -->"
END = "<!-- change-table:end -->"

_APP = {"name": "app", "repo": "https://github.com/example/app.git", "ref": "main", "mountPath": "/repo"}
_SCRATCH_VOLUME = {"name": "scratch-extra", "emptyDir": {}}
_SCRATCH_MOUNT = {"name": "scratch-extra", "mountPath": "/extra"}
_TOLERATION = {"key": "pool", "operator": "Exists", "effect": "NoSchedule"}
_AFFINITY = {
    "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "pool", "operator": "Exists"}]}]
        }
    }
}

# Every feature on, pinned image tag: what a team runs after a few weeks of use.
BASE: dict[str, Any] = {
    "clusterName": "team",
    "namespace": "team",
    "workers": 2,
    "imageTag": contract.DEFAULT_IMAGE_TAG,
    "workerPod": {"resources": {"requests": {"cpu": "1", "memory": "1Gi"}}},
    "gangScheduling": {"enabled": True},
    "appCode": [_APP],
    "sharedClaims": [{"claimName": "datasets", "accessMode": "ReadOnlyMany", "mountPath": "/datasets"}],
    "workerVolume": {"size": "10Gi", "mountPath": "/scratch"},
    "dataVolumes": [{"name": "train", "size": "50Gi", "mountPath": "/train"}],
    "dataPreparation": {"command": ["python3", "/repo/prepare.py", "/train"]},
}
# Host networking needs the interfaces and no NetworkPolicy (config/checks.py).
_HOST_NETWORK = {"networkPolicy.enabled": False, "hostNetwork.mpiInterfaces": "10.0.0.0/16"}
_ONE_SHOT = {"oneShot": {"enabled": True, "command": "mpiexec python3 /repo/train.py"}}


@dataclass(frozen=True)
class Example:
    key: str  # the config key (as in the README's config table), or a description of a non-key change
    change: str  # what the example does, in words
    set: dict[str, Any]  # keys (dotted paths, "[0]" for the first list entry) and their new values
    start: dict[str, Any] = field(default_factory=dict)  # keys set on BASE before the change
    version: str | None = None  # render the changed stack as this kompi version

    def before(self, base: dict[str, Any] = BASE) -> dict[str, Any]:
        """The stack config before the change (``base`` with ``start`` set)."""
        return _config(base, self.start)

    def after(self, base: dict[str, Any] = BASE) -> dict[str, Any]:
        return _config(base, self.start | self.set)


def _example(key: str, value: Any, start: dict[str, Any] | None = None) -> Example:
    return Example(key, f"-> `{json.dumps(value)}`", {key: value}, start or {})


def _pod_examples(pod: str) -> list[Example]:
    return [
        _example(f"{pod}.resources", {"requests": {"cpu": "2"}}),
        _example(f"{pod}.nodeSelector", {"pool": "mpi"}),
        _example(f"{pod}.tolerations", [_TOLERATION]),
        _example(f"{pod}.affinity", _AFFINITY),
        _example(f"{pod}.volumes", [_SCRATCH_VOLUME]),
        Example(
            f"{pod}.volumeMounts",
            "a mount of a volume the pods already have",
            {f"{pod}.volumeMounts": [_SCRATCH_MOUNT]},
            {f"{pod}.volumes": [_SCRATCH_VOLUME]},
        ),
        _example(f"{pod}.annotations", {"example.com/team": "ml"}),
    ]


EXAMPLES: list[Example] = [
    Example("kompi version", "upgrade kompi (the stack pins its imageTag)", {}, version="99.0.0"),
    _example("clusterName", "team2"),
    _example("namespace", "team2"),
    _example("createNamespace", False),
    _example("clusterDomain", "example.org"),
    _example("workers", 3),
    _example("workers", 0),
    _example("gpusPerWorker", 1),
    _example("slotsPerWorker", 2),
    _example("image", "registry.example.com/ml/kompi"),
    _example("imageTag", "5.0.11-bookworm-0.1.0"),
    _example("imagePullPolicy", "Always"),
    _example("imagePullSecrets", ["regcred"]),
    _example("sshKeyVersion", 2),
    _example("shmSize", "2Gi"),
    _example("runAsRoot", True),
    _example("runAsUser", 1001),
    _example("runAsGroup", 1001),
    *_pod_examples("masterPod"),
    _example("masterPod.compute", True),
    *_pod_examples("workerPod"),
    _example("oneWorkerPerNode", True),
    _example("networkPolicy.enabled", False),
    _example("networkPolicy.sshAllowFrom", ["10.0.0.0/8"]),
    _example("hostNetwork.enabled", True, _HOST_NETWORK),
    _example("hostNetwork.mpiInterfaces", "ens5", _HOST_NETWORK | {"hostNetwork.enabled": True}),
    _example("gangScheduling.enabled", False),
    _example("gangScheduling.mode", "volcano"),
    _example("gangScheduling.schedulerName", "my-scheduler"),
    _example("appCode", [_APP, _APP | {"name": "tools", "mountPath": "/tools"}]),
    _example("appCode[0].name", "code"),
    _example("appCode[0].repo", "https://github.com/example/other.git"),
    _example("appCode[0].ref", "v2"),
    _example("appCode[0].mountPath", "/code"),
    _example("appCode[0].subPath", "src"),
    _example("appCode[0].sshKeySecret", "deploy-key"),
    _example("appCode[0].insecureSkipHostKeyCheck", True, {"appCode[0].sshKeySecret": "deploy-key"}),
    _example("appCode[0].retries", 1),
    _example("appCode[0].retryWaitSeconds", 30),
    _example("appCodeFetcher", "git-sync"),
    _example("gitSyncImage", "registry.k8s.io/git-sync/git-sync:v4.4.3", {"appCodeFetcher": "git-sync"}),
    _example("sharedClaims", []),
    _example("sharedClaims[0].claimName", "datasets-v2"),
    _example("sharedClaims[0].accessMode", "ReadWriteMany"),
    _example("sharedClaims[0].mountPath", "/data"),
    _example("sharedClaims[0].readOnly", True),
    _example("workerVolume", None),
    _example("workerVolume", {"size": "10Gi", "mountPath": "/scratch"}, {"workerVolume": None}),
    _example("workerVolume.name", "local"),
    _example("workerVolume.size", "20Gi"),
    _example("workerVolume.storageClassName", "fast"),
    _example("workerVolume.accessMode", "ReadWriteOncePod"),
    _example("workerVolume.mountPath", "/local"),
    _example("dataVolumes", [*BASE["dataVolumes"], {"name": "eval", "size": "5Gi", "mountPath": "/eval"}]),
    _example("dataVolumes[0].name", "train2"),
    _example("dataVolumes[0].size", "100Gi"),
    _example("dataVolumes[0].storageClassName", "fast"),
    _example("dataVolumes[0].accessMode", "ReadWriteOnce", {"workers": 0}),
    _example("dataVolumes[0].mountPath", "/data"),
    _example("dataVolumes[0].retain", True, {"createNamespace": False}),
    _example("dataVolumes[0].readOnlyInPods", False),
    _example("dataPreparation", None),
    _example("dataPreparation.image", "registry.example.com/ml/prepare:1"),
    _example("dataPreparation.command", ["python3", "/repo/prepare.py", "--fast", "/train"]),
    _example("dataPreparation.env", {"SHARDS": "8"}),
    _example("dataPreparation.resources", {"requests": {"cpu": "2"}}),
    _example("dataPreparation.backoffLimit", 5),
    _example("dataPreparation.activeDeadlineSeconds", 7200),
    _example("oneShot.enabled", True, {"oneShot.command": "mpiexec python3 /repo/train.py"}),
    _example("oneShot.command", ["mpiexec", "python3", "/repo/eval.py"], _ONE_SHOT),
    _example("oneShot.releaseWorkers", False, _ONE_SHOT),
    _example("oneShot.timeoutSeconds", 1200, _ONE_SHOT),
    _example("oneShot.restarts", 5, _ONE_SHOT),
    _example("queue", "team-a"),
    _example("queue", "team-b", {"queue": "team-a"}),
    _example("queuePriorityClass", "urgent", {"queue": "team-a"}),
    _example("queueTimeoutSeconds", 600, {"queue": "team-a"}),
    Example("workers", "-> `3`, with a queue (a new Kueue pod group)", {"workers": 3}, {"queue": "team-a"}),
    Example(
        "workerPod.nodeSelector",
        '-> `{"pool": "h100"}`, with a queue (a new Kueue pod group, admitted to the flavor of those nodes)',
        {"workerPod.nodeSelector": {"pool": "h100"}},
        {"queue": "team-a"},
    ),
    _example("rolloutTimeoutSeconds", 1800),
    _example("stuckPodTimeoutSeconds", 300),
    _example("allowDataLoss", True),
]


def _set(config: dict[str, Any], path: str, value: Any) -> None:
    """Set ``path`` ("a.b", "a[0].b") in ``config``, making objects on the way; None removes the key."""
    parts = re.findall(r"\[\d+\]|[^.\[\]]+", path)
    target: Any = config
    for part in parts[:-1]:
        target = target[int(part[1:-1])] if part.startswith("[") else target.setdefault(part, {})
    if value is None:
        target.pop(parts[-1], None)  # back to the default
    else:
        target[parts[-1]] = copy.deepcopy(value)


def _config(base: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    config = copy.deepcopy(base)
    for path, value in values.items():
        _set(config, path, value)
    return config


def _render(config: dict[str, Any], version: str | None = None) -> list[PlannedObject]:
    raw = {f"kompi:{key}": value if isinstance(value, str) else json.dumps(value) for key, value in config.items()}
    if version is None:
        return planned_objects(raw)
    with mock.patch.object(contract, "KOMPI_VERSION", version):
        return planned_objects(raw)


def changes_of(example: Example, base: dict[str, Any] = BASE) -> list[ObjectChange]:
    return compare(_render(example.before(base)), _render(example.after(base), example.version))


def examples() -> Iterator[tuple[Example, Impact, list[ObjectChange]]]:
    for example in EXAMPLES:
        changes = changes_of(example)
        yield example, impact_of(changes), changes


def _cell(changes: list[ObjectChange]) -> str:
    worst = impact_of(changes)
    shown = [str(change) for change in changes if change.impact == worst] or ["no object changes"]
    others = len(changes) - len(shown) if changes else 0
    return "; ".join(shown) + (f" (and {others} smaller changes)" if others > 0 else "")


def change_table() -> str:
    lines = ["| key (`kompi:`...) | change | impact | why |", "|---|---|---|---|"]
    for example, impact, changes in examples():
        key = example.key if " " in example.key else f"`{example.key}`"
        lines.append(f"| {key} | {example.change} | **{impact.label}** | {_cell(changes)} |")
    return "\n".join([START, *lines, END])
