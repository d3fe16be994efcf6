"""Stack configs with data volumes and a data-preparation Job, for the tests in this directory."""

from __future__ import annotations

from typing import Any

from tests.stacks import EVERY_FEATURE

PREPARATION: dict[str, Any] = {
    "command": ["python3", "/repo/prepare.py", "--out", "/datasets"],
    "env": {"SHARDS": "4", "SEED": "7"},
    "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"memory": "2Gi"}},
    "backoffLimit": 1,
    "activeDeadlineSeconds": 600,
}

# Retention needs a namespace kompi does not create (destroying it would delete the claim).
DATA: dict[str, Any] = {
    "createNamespace": False,
    "dataVolumes": [
        {"name": "train", "size": "10Gi", "storageClassName": "nfs", "mountPath": "/datasets"},
        {"name": "keep", "size": "1Gi", "mountPath": "/keep", "retain": True, "readOnlyInPods": False},
    ],
    "dataPreparation": PREPARATION,
}

# Small: two workers, defaults elsewhere.
SMALL: dict[str, Any] = DATA | {"clusterName": "small"}

# Every other feature too (app code, shared claims, worker volume, gang scheduling, ...).
EVERY_FEATURE_WITH_DATA: dict[str, Any] = EVERY_FEATURE | DATA


def with_preparation(**changes: Any) -> dict[str, Any]:
    """SMALL with ``kompi:dataPreparation`` fields changed."""
    return SMALL | {"dataPreparation": PREPARATION | changes}
