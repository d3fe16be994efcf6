"""Data-volume and data-preparation config: what is refused (one line: key, value, expectation) and defaults."""

from __future__ import annotations

import pytest

from kompi_components.config import load_config
from kompi_components.manifests.data import read_only_in_pods
from tests.config.refusal import assert_refused_with_one_line
from tests.data.configs import PREPARATION, SMALL
from tests.stacks import as_config

VOLUME = {"name": "train", "size": "1Gi", "mountPath": "/datasets"}
CASES: dict[str, tuple[dict[str, object], str]] = {
    "rwo-on-three-pods": (
        {"dataVolumes": [VOLUME | {"accessMode": "ReadWriteOnce"}]},
        'invalid config kompi:dataVolumes[0].accessMode = "ReadWriteOnce": expected ReadWriteMany or ReadOnlyMany: '
        "claim 'kompi-data-train' is mounted by 3 pods; a ReadWriteOnce claim attaches to one node only "
        "('Volume is already attached by pod ...')",
    ),
    "rwop-on-two-pods": (
        {"workers": 1, "dataVolumes": [VOLUME | {"accessMode": "ReadWriteOncePod"}]},
        'kompi:dataVolumes[0].accessMode = "ReadWriteOncePod": expected ReadWriteMany or ReadOnlyMany: '
        "claim 'kompi-data-train' is mounted by 2 pods",
    ),
    "read-only-many-with-preparation": (
        {"dataVolumes": [VOLUME | {"accessMode": "ReadOnlyMany"}], "dataPreparation": PREPARATION},
        'kompi:dataVolumes[0].accessMode = "ReadOnlyMany": expected a writable mode: the data-preparation Job '
        "writes claim 'kompi-data-train'",
    ),
    "rwop-with-preparation-and-master-only": (
        {"workers": 0, "dataVolumes": [VOLUME | {"accessMode": "ReadWriteOncePod"}], "dataPreparation": PREPARATION},
        "expected ReadWriteMany or ReadWriteOnce: the data-preparation Job and the master both mount",
    ),
    "retain-in-a-namespace-kompi-deletes": (
        {"dataVolumes": [VOLUME | {"retain": True}]},
        "kompi:dataVolumes[0].retain = true: expected false while kompi:createNamespace is true",
    ),
    "preparation-without-volumes": (
        {"dataPreparation": {"command": ["true"]}},
        'kompi:dataPreparation = {"command": ["true"]}: expected kompi:dataVolumes too',
    ),
    "preparation-without-command": (
        {"dataVolumes": [VOLUME], "dataPreparation": {"image": "busybox"}},
        "kompi:dataPreparation.command = <missing>: expected a value (this key is required)",
    ),
    "preparation-empty-command": (
        {"dataVolumes": [VOLUME], "dataPreparation": {"command": []}},
        "kompi:dataPreparation.command = []: expected a non-empty list of non-empty strings",
    ),
    "env-entry-without-name": (
        {"dataVolumes": [VOLUME], "dataPreparation": {"command": ["true"], "env": [{"value": "1"}]}},
        'kompi:dataPreparation.env = [{"value": "1"}]: expected a list of Kubernetes EnvVars, each with a name',
    ),
    "env-map-with-a-number": (
        {"dataVolumes": [VOLUME], "dataPreparation": {"command": ["true"], "env": {"SHARDS": 4}}},
        'kompi:dataPreparation.env = {"SHARDS": 4}: expected a name->value map of strings (quote numbers)',
    ),
    "env-as-a-string": (
        {"dataVolumes": [VOLUME], "dataPreparation": {"command": ["true"], "env": "A=1"}},
        'kompi:dataPreparation.env = "A=1": expected a name->value map of strings',
    ),
    "command-as-a-string": (
        {"dataVolumes": [VOLUME], "dataPreparation": {"command": "python3 prepare.py"}},
        'kompi:dataPreparation.command = "python3 prepare.py": expected a list',
    ),
    "duplicate-volume-names": (
        {"dataVolumes": [VOLUME, VOLUME | {"mountPath": "/other"}]},
        'kompi:dataVolumes[1].name = "train": expected a name used by one dataVolumes entry only',
    ),
    "mount-path-used-twice": (
        {
            "dataVolumes": [VOLUME],
            "sharedClaims": [{"claimName": "x", "accessMode": "ReadWriteMany", "mountPath": "/datasets"}],
        },
        'kompi:dataVolumes[0].mountPath = "/datasets": expected a mount path not used already',
    ),
    "bad-size": ({"dataVolumes": [VOLUME | {"size": "lots"}]}, 'kompi:dataVolumes[0].size = "lots": expected'),
    "name-too-long-for-a-pod-volume": (
        {"dataVolumes": [VOLUME | {"name": "a" * 41}]},
        "at most 40 characters",
    ),
    "unknown-key": (
        {"dataVolumes": [VOLUME | {"readonly": True}]},
        "kompi:dataVolumes[0].readonly = true: expected no such key here",
    ),
    "zero-deadline": (
        {"dataVolumes": [VOLUME], "dataPreparation": {"command": ["true"], "activeDeadlineSeconds": 0}},
        "kompi:dataPreparation.activeDeadlineSeconds = 0: expected a number >= 1",
    ),
}


@pytest.mark.parametrize(("values", "message"), CASES.values(), ids=CASES.keys())
def test_bad_data_config_is_refused_with_one_line(values: dict[str, object], message: str) -> None:
    assert_refused_with_one_line(values, message)


def test_read_write_once_is_fine_for_a_master_only_cluster() -> None:
    config = load_config(as_config({"workers": 0, "dataVolumes": [VOLUME | {"accessMode": "ReadWriteOnce"}]}))
    assert config.data_volumes[0].access_mode == "ReadWriteOnce"


def test_defaults_share_between_nodes_and_delete_on_destroy() -> None:
    (volume,) = load_config(as_config({"dataVolumes": [VOLUME]})).data_volumes
    assert volume.access_mode == "ReadWriteMany"
    assert volume.retain is False
    assert volume.storage_class_name is None


def test_pods_mount_read_only_when_a_job_prepares_the_data_unless_told_otherwise() -> None:
    prepared = load_config(as_config(SMALL))
    assert [read_only_in_pods(prepared, v) for v in prepared.data_volumes] == [True, False]
    unprepared = load_config(as_config({"dataVolumes": [VOLUME]}))
    assert read_only_in_pods(unprepared, unprepared.data_volumes[0]) is False


def test_preparation_defaults() -> None:
    config = load_config(as_config({"dataVolumes": [VOLUME], "dataPreparation": {"command": ["true"]}}))
    preparation = config.data_preparation
    assert preparation is not None
    assert preparation.image is None
    assert preparation.backoff_limit == 2
    assert preparation.active_deadline_seconds == 3600
    assert preparation.env == []


def test_env_map_becomes_sorted_env_vars() -> None:
    env = {"SHARDS": "4", "OUT": "/datasets"}
    config = load_config(as_config({"dataVolumes": [VOLUME], "dataPreparation": {"command": ["true"], "env": env}}))
    assert config.data_preparation is not None
    assert config.data_preparation.env == [{"name": "OUT", "value": "/datasets"}, {"name": "SHARDS", "value": "4"}]


def test_env_as_a_list_of_env_vars_is_accepted() -> None:
    env = [{"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "s3", "key": "token"}}}]
    config = load_config(as_config({"dataVolumes": [VOLUME], "dataPreparation": {"command": ["true"], "env": env}}))
    assert config.data_preparation is not None
    assert config.data_preparation.env == env
